"""Domain types shared by the store, rendering and use-cases: a card and its explicit states."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from kandev_slack.core.approval import Approval
from kandev_slack.core.claims import Claim
from kandev_slack.core.clarification import Answer, Bundle
from kandev_slack.core.pending import ItemKind


def _item_tag(value: Any) -> str | None:
    """Which kind a stored or given item is: an item says its :attr:`kind`; a stored approval
    says so in its ``type``. Named rule for the untagged shape: a bundle is Kandev's wire
    model, stored as it came, with no ``type`` but its ``questions`` — that is read as a
    question, and only that. Anything else (a ``type`` of a kind this release does not know, a
    dict of neither shape) matches no tag: pydantic refuses it, never reads it as a bundle."""
    if isinstance(value, dict):
        if "type" in value:
            return str(value["type"])
        return ItemKind.QUESTION.value if "questions" in value else None
    kind = getattr(value, "kind", None)
    return kind.value if isinstance(kind, ItemKind) else None


#: What a person does: answer or reject a question, open a view, choose an approval's option,
#: be on it ("I'm on it") or not, snooze it or not.
Action = Literal["answer", "reject", "view", "approve", "claim", "release", "snooze", "unsnooze"]


#: What a card is the face of: a clarification bundle or an approval (kandev_slack.core.pending).
Item = Annotated[
    Annotated[Bundle, Tag("question")] | Annotated[Approval, Tag("approval")],
    Discriminator(_item_tag),
]


class UnknownKind(ValueError):
    """A stored card of a kind this release does not know (a newer release wrote it): it is
    left alone, never read as another kind."""

    def __init__(self, pending_id: str, kind: str) -> None:
        super().__init__(f"card {pending_id} is of kind {kind!r}, unknown to this release")
        self.pending_id, self.kind = pending_id, kind


class NotThisKind(TypeError):
    """Kind-specific code reached for what another kind's card does not have (a bug)."""


class CardState(StrEnum):
    """pending -> answered | rejected | ended | unavailable (the last four are terminal)."""

    PENDING = "pending"
    ANSWERED = "answered"
    REJECTED = "rejected"
    ENDED = "ended"
    UNAVAILABLE = "unavailable"

    @property
    def terminal(self) -> bool:
        return self is not CardState.PENDING


class CardOutcome(BaseModel):
    """What ended a card: who/where, with which answers or reason, and when.

    Who: ``by_user``, the Slack person (answered in Slack, or ``via`` Kandev by the Kandev
    account they linked); ``kandev_user`` / ``kandev_name``, the Kandev account it was made
    with and its display name when it was (a linked person's own, or the one Kandev recorded
    for an approval: ``permission_resolution.actor_user_id``), "" when it was the bot's or is
    unknown. Outcomes stored before those fields existed read as "".
    """

    model_config = ConfigDict(frozen=True)

    state: CardState
    via: Literal["slack", "kandev"] = "kandev"
    by_user: str | None = None  # Slack user id (see above)
    answers: list[Answer] = Field(default_factory=list)
    reason: str = ""
    at: datetime
    kandev_user: str = ""
    kandev_name: str = ""


def shown_outcome(
    state: CardState, outcome: CardOutcome | None, now: datetime
) -> CardOutcome | None:
    """The outcome a card in ``state`` shows: None while pending; the stored one when it is of
    that state; else one of that state (at the stored time, or ``now``)."""
    if not state.terminal:
        return None
    if outcome is not None and outcome.state is state:
        return outcome
    return CardOutcome(state=state, at=outcome.at if outcome else now)


class TaskInfo(BaseModel):
    """What a card shows about the task a bundle belongs to."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    title: str = ""
    workspace_id: str = ""
    workspace_name: str = ""
    agent_name: str = ""
    priority: str = ""  # "" for cards stored before it was kept: the default (medium)
    labels: tuple[str, ...] = ()
    #: The task's human assignee (a Kandev user id) when the card was made; "" when unset,
    #: and for cards stored before it was kept.
    assignee: str = ""


class PastChoice(BaseModel):
    """One question's earlier answer, as given: the chosen options' labels (their ids when
    unlabelled), in order, and the free text. Neither: the question was not answered."""

    model_config = ConfigDict(frozen=True)

    labels: tuple[str, ...] = ()
    text: str = ""


class PastAnswer(BaseModel):
    """An earlier answer to the same questions (same workspace, same channel and route): what
    a card shows under its questions, kept as data (``choices``, per question in the bundle's
    order; who; when) and rendered by the card. ``summary``: rows written by older versions
    hold the answer already worded (safe mrkdwn) there instead, shown as it is."""

    model_config = ConfigDict(frozen=True)

    pending_id: str
    channel: str
    ts: str | None = None
    via: Literal["slack", "kandev"] = "kandev"
    by_user: str | None = None
    choices: tuple[PastChoice, ...] = ()
    summary: str = ""  # legacy: the worded answer, from rows written before ``choices``
    at: datetime


@dataclass(frozen=True, slots=True)
class ResolvedTask:
    """A resolved card as the App Home filters it (who may see it follows from its task):
    only the shown ones are then read whole."""

    pending_id: str
    task: TaskInfo


@dataclass(frozen=True)
class NewCard:
    """A card about to be recorded: the item it shows (a bundle or an approval), its task, the
    channel it goes to, ``question_key`` (a bundle's normalised questions; see
    kandev_slack/usecases/past_answers.py) and ``past``, the earlier answer the card
    shows."""

    item: Bundle | Approval
    task: TaskInfo
    channel: str
    question_key: str | None = None
    past: PastAnswer | None = None


class Card(BaseModel):
    """A posted (or being-posted) Slack card for one pending item, as the store keeps it."""

    model_config = ConfigDict(frozen=True)

    pending_id: str
    task_id: str
    session_id: str = ""
    workspace_id: str = ""
    channel: str
    ts: str | None = None  # None while the card is recorded but its message not posted yet
    #: Posted in the thread of the first identical item waiting in its channel: that card's
    #: pending id and message (None: its own message in the channel; see
    #: kandev_slack/usecases/groups.py).
    thread_of: str | None = None
    thread_ts: str | None = None
    state: CardState = CardState.PENDING
    #: What the agent is blocked on (a PendingItem: the kind-agnostic parts read only that).
    item: Item
    task: TaskInfo
    outcome: CardOutcome | None = None
    past: PastAnswer | None = None  # the last answer to the same questions, when posted
    #: Who is on it ("I'm on it"), while the claim holds or until it is lapsed; and how long
    #: claims that are over paused its follow-ups (kandev_slack/core/claims.py).
    claim: Claim | None = None
    paused_s: float = 0.0
    created_at: datetime
    updated_at: datetime

    @property
    def kind(self) -> ItemKind:
        return self.item.kind

    @property
    def bundle(self) -> Bundle:
        """A question card's bundle (question-only code; raises :class:`NotThisKind` for
        another kind's card: check :attr:`kind` first)."""
        if not isinstance(self.item, Bundle):
            raise NotThisKind(f"card {self.pending_id} is an {self.kind.value}, not a question")
        return self.item

    @property
    def approval(self) -> Approval:
        """An approval card's request (raises :class:`NotThisKind` for another kind's card)."""
        if not isinstance(self.item, Approval):
            raise NotThisKind(f"card {self.pending_id} is a {self.kind.value}, not an approval")
        return self.item
