"""Identical items waiting at once (issue 33): one card per identical item in a channel.

Two items are identical when their kind's ``identity_key`` (kandev_slack/kinds/: for a
question bundle its workspace and, per question, title, prompt, option labels and
descriptions; for an approval its workspace, tool, command, working directory and options)
is the same. The **first** identical item waiting in a channel gets its own channel card; each
later one is posted in that card's thread (a card all the same: its own message, controls,
state and outcome edit), headed "Also from <its task>", and the first card's line counts those
waiting in its thread.

Which card a new one goes under (:meth:`GroupLines.first_of`): the oldest waiting card of an
identical item in its channel, recorded before it, that is in no thread itself — the same one
on every replica. One that is not posted yet is waited for (its post comes first). An item
identical to one already resolved starts a new card: a resolved card is never "first". When
the first card is resolved while others wait in its thread, they stay there (each resolved
on its own), and its line keeps counting those still waiting.

The edits a change needs go through the outbox: a card posted in a thread, or resolved there,
edits the first card's line once (:meth:`GroupLines.edits_when_posted`,
:meth:`GroupLines.edits_when_resolved`).

A card's *group* (Send to all: kandev_slack/usecases/answering/groups.py) is the other posted,
waiting cards of identical items in its channel, wherever they are posted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kandev_slack.core.domain import Card, CardState
from kandev_slack.core.groups import MAX_LINKS, AlsoAsked, FirstCard
from kandev_slack.core.outbox import GROUP_REASON
from kandev_slack.kinds.registry import spec_of

#: At most this many members are read, shown and answered at once (bounded work).
MAX_GROUP = 20
#: At most this many cards waiting in a thread are counted on its first card ("more than").
MAX_COUNTED = 50


# ---- the grouping rules (pure) ---------------------------------------------------------------


def one_question(card: Card) -> bool:
    return spec_of(card).one_question(card)


def group_key(card: Card) -> str | None:
    """The key identical items share (None: never grouped; the kind's ``identity_key``)."""
    return spec_of(card).identity_key(card.item, card.task.workspace_id or card.workspace_id)


def groupable(card: Card) -> bool:
    """Whether ``card`` can be in a group now: a posted, waiting card of a grouped item."""
    return card.ts is not None and card.state is CardState.PENDING and group_key(card) is not None


def also_asked(members: Sequence[Card]) -> tuple[AlsoAsked, ...]:
    """What a card shows of the cards in its thread (oldest first): the first ``MAX_LINKS``,
    and one more when there are more."""
    return tuple(as_link(m) for m in members[: MAX_LINKS + 1])


def as_link(card: Card) -> AlsoAsked:
    return AlsoAsked(
        pending_id=card.pending_id, task_id=card.task_id or card.task.task_id, title=card.task.title
    )


@dataclass(frozen=True)
class InThread:
    """What a first card shows of its thread: the cards waiting there (the first few, to
    link) and how many (at most :data:`MAX_COUNTED`)."""

    shown: tuple[AlsoAsked, ...] = ()
    count: int = 0


@dataclass(frozen=True)
class GroupEdit:
    """The edit of ``card``'s message (a first card, whose line changes), once per ``reason``
    (``group:joined:<pending id>``, ``group:left:<pending id>``)."""

    card: Card
    reason: str


# ---- the ports ---------------------------------------------------------------------------------


class GroupCards(Protocol):
    def get(self, pending_id: str) -> Card | None: ...

    def same_item(
        self,
        identity_key: str,
        channel: str,
        *,
        exclude: str = "",
        resolved_since_of: str | None = None,
        limit: int = 50,
    ) -> list[Card]: ...

    def same_item_ids(
        self, identity_key: str, channel: str, *, exclude: str = "", limit: int = 50
    ) -> list[str]: ...

    def first_waiting(self, identity_key: str, channel: str, before: Card) -> FirstCard | None: ...

    def in_thread(self, first: str, limit: int = 50) -> list[Card]: ...


@dataclass(eq=False)
class GroupLines:
    """Identical items: where a card goes, what a first card shows, the edits a change needs
    (built once in the composition root)."""

    cards: GroupCards

    def members(self, card: Card) -> list[Card]:
        """The other posted, waiting cards of items identical to ``card``'s in its channel."""
        key = group_key(card)
        if key is None:
            return []
        found = self.cards.same_item(key, card.channel, exclude=card.pending_id, limit=MAX_GROUP)
        return [m for m in found if groupable(m)]

    def member_ids(self, card: Card) -> list[str]:
        """The ids of :meth:`members` (the cards of one identity key are all grouped)."""
        key = group_key(card)
        if key is None:
            return []
        return self.cards.same_item_ids(key, card.channel, exclude=card.pending_id, limit=MAX_GROUP)

    def first_of(self, card: Card) -> FirstCard | None:
        """The card ``card`` is posted in the thread of (None: its own channel card)."""
        key = group_key(card)
        if key is None or card.thread_of is not None:
            return None
        return self.cards.first_waiting(key, card.channel, card)

    def in_thread(self, card: Card) -> InThread:
        """What ``card`` shows of the cards waiting in its thread (nothing for a card in a
        thread, or of an item never grouped)."""
        if card.thread_of is not None or card.ts is None or group_key(card) is None:
            return InThread()
        waiting = self.cards.in_thread(card.pending_id, limit=MAX_COUNTED)
        return InThread(also_asked(waiting), len(waiting))

    # ---- a card posted in, or resolved in, a thread: its first card's line is edited -------

    def edits_when_posted(self, card: Card) -> list[GroupEdit]:
        """``card`` was just posted: in a thread, the first card's line counts it."""
        return self._first_card_edit(card, "joined")

    def edits_when_resolved(self, card: Card) -> list[GroupEdit]:
        """``card`` was resolved: in a thread, the first card's line no longer counts it."""
        if not card.state.terminal:
            return []
        return self._first_card_edit(card, "left")

    def _first_card_edit(self, card: Card, change: str) -> list[GroupEdit]:
        if card.thread_of is None or card.ts is None:
            return []
        first = self.cards.get(card.thread_of)
        if first is None or first.ts is None:
            return []
        return [GroupEdit(first, f"{GROUP_REASON}{change}:{card.pending_id}")]
