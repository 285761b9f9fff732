"""A bundle, and how it ended, read from its task's ``clarification_request`` messages.

Kandev records one conversation message per question of a bundle, with ``metadata.pending_id``,
``metadata.question_id``, ``metadata.question_index`` / ``question_total``, the question itself
(``metadata.question``: ``id``, ``title``, ``prompt``, ``options``), the bundle's
``metadata.context``, ``metadata.status`` (pending/answered/rejected/cancelled/expired) and,
once answered, ``metadata.response`` (``question_id``, ``selected_options``, ``custom_text``).
A decided message's ``updated_at`` is when Kandev recorded the resolution (seen on the wire: the
same instant as the respond reply's ``responded_at``). A message's ``created_at`` has Kandev's
full precision; the active list shows the bundle's in whole seconds.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from kandev_slack.core.clarification import Answer, Bundle, Option, Question
from kandev_slack.kandev.errors import KandevProtocolError
from kandev_slack.kandev.models import FinalState, FinalStatus

CLARIFICATION_TYPE = "clarification_request"

# When the questions of one bundle disagree, the most decisive status wins.
_PRECEDENCE: tuple[FinalStatus, ...] = ("answered", "rejected", "cancelled", "expired", "pending")


class _Response(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question_id: str = ""
    selected_options: list[str] = Field(default_factory=list)
    custom_text: str = ""


class _Question(BaseModel):
    """The question a message asks (``metadata.question``)."""

    model_config = ConfigDict(extra="ignore")

    id: str = ""
    title: str = ""
    prompt: str = ""
    options: list[Option] = Field(default_factory=list)


class ClarificationMeta(BaseModel):
    model_config = ConfigDict(extra="ignore")

    pending_id: str = ""
    question_id: str = ""
    question_index: int = 0
    question_total: int = 0
    status: str = ""
    response: _Response | None = None
    context: str = ""
    question: _Question | None = None
    #: The message's ``updated_at``, ``created_at`` and ``session_id`` (set by
    #: :func:`bundle_messages`, not part of the metadata).
    updated_at: datetime | None = None
    created_at: datetime | None = None
    session_id: str = ""


class ConversationMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = ""
    type: str = ""
    metadata: ClarificationMeta = Field(default_factory=ClarificationMeta)
    updated_at: datetime | None = None
    created_at: datetime | None = None
    session_id: str = ""


class ConversationPage(BaseModel):
    """One page of ``get_task_conversation_kandev``.

    The type filter is applied after paging, so a page may be empty while ``has_more`` is true;
    ``cursor`` is the id of the last message of the unfiltered page.
    """

    model_config = ConfigDict(extra="ignore")

    messages: list[ConversationMessage] = Field(default_factory=list)
    has_more: bool = False
    cursor: str = ""


def bundle_messages(
    messages: list[ConversationMessage], pending_id: str
) -> list[ClarificationMeta]:
    """The clarification metadata of ``pending_id``'s questions, in question order."""
    found = [
        m.metadata.model_copy(
            update={
                "updated_at": m.updated_at,
                "created_at": m.created_at,
                "session_id": m.session_id,
            }
        )
        for m in messages
        if m.type == CLARIFICATION_TYPE and m.metadata.pending_id == pending_id
    ]
    return sorted(found, key=lambda md: md.question_index)


def is_complete(found: list[ClarificationMeta]) -> bool:
    """Whether every question of the bundle has been seen."""
    return bool(found) and len({md.question_id for md in found}) >= max(
        md.question_total for md in found
    )


def as_bundle(found: list[ClarificationMeta], task_id: str) -> Bundle | None:
    """The bundle as Kandev's active list would show it, from the messages of all its questions
    (None: some question is not written yet, or a message lacks what the list shows: its
    question, its session or its creation time). Its creation time is its first message's, in
    whole seconds as the list has it."""
    if not is_complete(found):
        return None
    questions: dict[str, Question] = {}
    for md in sorted(found, key=lambda md: md.question_index):
        asked = md.question
        if asked is None or md.created_at is None or not md.session_id:
            return None
        question_id = md.question_id or asked.id
        questions.setdefault(
            question_id,
            Question(
                question_id=question_id,
                title=asked.title,
                prompt=asked.prompt,
                status=md.status or "pending",
                options=asked.options,
            ),
        )
    created = min(md.created_at for md in found if md.created_at is not None)
    return Bundle(
        pending_id=found[0].pending_id,
        task_id=task_id,
        session_id=found[0].session_id,
        created_at=created.replace(microsecond=0),
        context=found[0].context,
        questions=list(questions.values()),
    )


def final_state(found: list[ClarificationMeta]) -> FinalState:
    """The bundle's final state from the metadata of its questions (``unknown`` if none: not
    in the conversation). Messages of the bundle whose statuses are none Kandev uses are not
    an answer: they raise :class:`KandevProtocolError` (unreadable, try again)."""
    found = sorted(found, key=lambda md: md.question_index)
    statuses = {md.status for md in found}
    status: FinalStatus | None = next((s for s in _PRECEDENCE if s in statuses), None)
    if status is None:
        if found:
            raise KandevProtocolError(f"clarification messages with status {sorted(statuses)!r}")
        return FinalState(status="unknown")
    # When Kandev recorded the resolution: the earliest decided message's update (None: unsaid).
    times = [md.updated_at for md in found if md.status == status and md.updated_at is not None]
    responded_at = min(times) if times and status in ("answered", "rejected") else None
    if status != "answered":
        return FinalState(status=status, responded_at=responded_at)
    answers = [
        Answer(
            question_id=md.response.question_id or md.question_id,
            selected_options=md.response.selected_options,
            custom_text=md.response.custom_text,
        )
        for md in found
        if md.status == "answered" and md.response is not None
    ]
    return FinalState(status="answered", answers=answers, responded_at=responded_at)
