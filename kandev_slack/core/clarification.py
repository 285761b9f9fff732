"""A clarification: what an agent asks with ``ask_user_question_kandev`` — a *bundle* of 1–4
questions with their options — and a person's answer to one question.

Domain types, shared by every layer; they are also Kandev's wire shape (unknown fields are
ignored, everything is immutable), which kandev_slack/kandev/ reads and writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from kandev_slack.core.pending import ItemKind

#: The reason of a rejection made by Skip: the words Kandev's own web UI sends for its Skip
#: button, so that the agent reads a skip the same way wherever it came from.
SKIPPED_REASON = "User skipped"


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Option(_Wire):
    option_id: str
    label: str
    description: str = ""


class Question(_Wire):
    question_id: str
    title: str = ""
    prompt: str = ""
    status: str = "pending"
    options: list[Option] = Field(default_factory=list)

    def option(self, option_id: str) -> Option | None:
        return next((o for o in self.options if o.option_id == option_id), None)


class Bundle(_Wire):
    """One clarification request (1-4 questions sharing a pending_id)."""

    pending_id: str
    task_id: str
    session_id: str = ""
    created_at: datetime
    age_seconds: int = 0
    context: str = ""
    questions: list[Question] = Field(default_factory=list)

    def question(self, question_id: str) -> Question | None:
        return next((q for q in self.questions if q.question_id == question_id), None)

    # ---- as a pending item (kandev_slack.core.pending.PendingItem)
    # ----------------------------------

    @property
    def kind(self) -> ItemKind:
        return ItemKind.QUESTION

    @property
    def item_id(self) -> str:
        return self.pending_id

    @property
    def headline(self) -> str:
        """The first question's prompt (its title when it has none), on one line."""
        first = self.questions[0] if self.questions else None
        text = (first.prompt or first.title) if first else ""
        return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class ListedBundle:
    """A bundle from Kandev's whole active list, kept for a view: what every item of the list
    needs (its ids and creation time) and the rest as JSON, decoded by :meth:`decode` for the
    items the view shows. With 1,000 waiting, a Home or listing holds ~1 MB of these instead
    of ~4 MB of decoded bundles (each nested model keeps a dict and a set of its own)."""

    pending_id: str
    task_id: str
    created_at: datetime
    #: The bundle as :meth:`Bundle.model_dump_json` wrote it (validated when it was listed).
    json: str

    @classmethod
    def of(cls, bundle: Bundle) -> ListedBundle:
        return cls(
            bundle.pending_id,
            bundle.task_id,
            bundle.created_at,
            bundle.model_dump_json(),
        )

    def decode(self) -> Bundle:
        return Bundle.model_validate_json(self.json)


class Answer(_Wire):
    """One answer entry: selected option ids and/or free text for one question."""

    question_id: str
    selected_options: list[str] = Field(default_factory=list)
    custom_text: str = ""
