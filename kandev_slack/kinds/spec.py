"""What every kind of pending item must say (:class:`KindSpec`), and the narrow ports its
operations are given (never a concrete edge: the caller passes the Kandev client it holds)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

from kandev_slack.core.approval import Approval
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card
from kandev_slack.core.pending import Found, ItemKind, PendingItem

#: What Kandev's calls reply (kandev_slack.kandev.models.Outcome): kinds never imports the
#: Kandev edge, so the spec returns whatever the port it is given returns.
O_co = TypeVar("O_co", covariant=True)
Out = TypeVar("Out")


@dataclass(frozen=True)
class Try:
    """One person's attempt, as a kind's operations read it (the answer pipeline's ``Attempt``
    without what only the pipeline needs)."""

    pending_id: str
    action: str
    answers: Sequence[Answer] = ()
    reason: str = ""


@dataclass(frozen=True)
class Invalid:
    """Why an attempt is refused before it is sent: what was ``found`` wrong, or a text
    ``length`` over Kandev's limit (the pipeline's ``Problem``)."""

    found: Found | None = None
    length: int | None = None


class ApprovalCalls(Protocol[O_co]):
    """The approval calls the approval's spec makes, on ``Resolver.permissions``
    (kandev_slack.kandev.approvals.client.PermissionsClient satisfies it)."""

    def approve(
        self, approval: Approval, option_id: str, *, first_sent: datetime, resend: bool = False
    ) -> O_co: ...

    def read_back(
        self, approval: Approval, option_id: str, *, first_sent: datetime
    ) -> O_co | None: ...


class Resolver(Protocol[O_co]):
    """Kandev's calls that resolve items and read how they ended (the whole client,
    kandev_slack.kandev.client.KandevClient; each kind uses its own part)."""

    @property
    def permissions(self) -> ApprovalCalls[O_co]:
        """The approval calls."""
        ...

    def answer(
        self,
        pending_id: str,
        answers: list[Answer],
        *,
        resend: bool = False,
        first_sent: datetime | None = None,
    ) -> O_co: ...

    def reject(
        self,
        pending_id: str,
        reason: str = "",
        *,
        resend: bool = False,
        first_sent: datetime | None = None,
    ) -> O_co: ...

    def recorded(
        self,
        task_id: str,
        pending_id: str,
        *,
        answers: list[Answer] | None = None,
        reason: str = "",
        session_id: str | None = None,
        first_sent: datetime | None = None,
    ) -> O_co | None: ...


class KindSpec(Protocol):
    """Everything that differs by kind. One object per :class:`ItemKind`, in the registry."""

    #: The kind (stored as ``cards.kind``; a label on metrics).
    kind: ItemKind

    @property
    def item_type(self) -> type[PendingItem]:
        """The core type of its items (kandev_slack.core.clarification.Bundle…)."""
        ...

    def owns_key(self, key: str) -> bool:
        """Whether a card key (an item id) names an item of this kind."""
        ...

    # ---- resolving (the resolution call, the final-state read, local validation) ----------

    def invalid(self, card: Card, attempt: Try, max_text: int) -> Invalid | None:
        """What Kandev would refuse in ``attempt``, checked before sending (None: nothing)."""
        ...

    def send(
        self, kandev: Resolver[Out], card: Card, attempt: Try, *, first_sent: datetime, resend: bool
    ) -> Out:
        """Resolve ``card``'s item with ``attempt`` on Kandev (its one resolution call)."""
        ...

    def read_back(
        self, kandev: Resolver[Out], card: Card, attempt: Try, *, first_sent: datetime
    ) -> Out | None:
        """What Kandev recorded for ``attempt`` (how the item ended), sending nothing."""
        ...

    # ---- what the card offers, how it reads (the rendering choices) -----------------------

    def refusal(
        self, card: Card, action: str, via: str, option: tuple[str, str] | None
    ) -> str | None:
        """Why a click (``action`` from ``via``, naming ``option``: question id, option id)
        names what the card never offered: a refusal kind ("tampered", "not_a_card"), or
        None when it is one the card offers."""
        ...

    #: Offered "Snooze…" (Home items and DM cards, while it waits).
    snoozable: bool
    #: Listed as a waiting question (the listing, the posted-pending fallback, the reconciler).
    listed_as_question: bool
    #: Its headline is Markdown (a question's; an approval's is literal text).
    markdown_headline: bool
    #: Has a full view ("View whole request"; the thread holds what does not fit).
    has_whole_view: bool
    #: Answered by a reply in its thread (a single-question card of its kind may be).
    thread_answerable: bool

    def one_question(self, card: Card) -> bool:
        """Whether the card asks exactly one question (its answer may be sent to the others
        of its group: Send to all)."""
        ...

    def identity_key(self, item: PendingItem, workspace_id: str) -> str | None:
        """The digest that identical items share (None: never grouped), normalised: one card
        per identical item waiting in a channel, the others in its thread
        (kandev_slack/usecases/groups.py). What the agent says around it (a bundle's context)
        is not part of it."""
        ...

    def needs_thread_for_whole_text(self, card: Card, fits: Any) -> bool:
        """Whether its whole text needs the card's thread (``fits``: the renderer's check
        whether an item's text fits a view)."""
        ...
