"""Identical questions waiting at once: a card's *group* and the edits its line needs.

A card's group: the other waiting, posted one-question question cards in the same channel
whose question is the same — the past answers' question key (kandev_slack/usecases/
past_answers.py: workspace, title and prompt, normalised). Approvals and multi-question bundles
are never grouped. Each waiting member shows the others (kandev_slack/cards/parts/groups.py);
the card edits a change of membership needs (a member posted, a member resolved) go through the
outbox (:meth:`GroupLines.edits_when_posted`, :meth:`GroupLines.edits_when_resolved`).

Shared by the outbox (the lines) and answering (Send to all, kandev_slack/usecases/answering/
groups.py, which offers one person's winning answer to the rest of the group)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kandev_slack.core.domain import Card, CardState
from kandev_slack.core.groups import MAX_LINKS, AlsoAsked
from kandev_slack.core.outbox import GROUP_REASON
from kandev_slack.kinds.registry import spec_of
from kandev_slack.usecases.past_answers import question_key

#: At most this many members are read, shown and answered at once (bounded work).
MAX_GROUP = 20


# ---- the grouping rules (pure) ---------------------------------------------------------------


def one_question(card: Card) -> bool:
    return spec_of(card).one_question(card)


def groupable(card: Card) -> bool:
    """Whether ``card`` can be in a group: a posted, waiting one-question question card."""
    return one_question(card) and card.ts is not None and card.state is CardState.PENDING


def group_key(card: Card) -> str | None:
    """The key the members of ``card``'s group share (None: never grouped): the past answers'
    question key of its workspace and question."""
    if not one_question(card):
        return None
    return question_key(card.task.workspace_id, card.bundle)


def also_asked(members: Sequence[Card]) -> tuple[AlsoAsked, ...]:
    """What a card shows of its group's other members (oldest first): the first
    ``MAX_LINKS``, and one more when there are more (the card says "more than")."""
    return tuple(
        AlsoAsked(pending_id=m.pending_id, task_id=m.task_id or m.task.task_id, title=m.task.title)
        for m in members[: MAX_LINKS + 1]
    )


#: How a card's group line looks, as far as who it links to and whether it says "more than".
Shown = tuple[tuple[str, ...], bool]


def _shown_ids(shown: Sequence[AlsoAsked]) -> Shown:
    return tuple(a.pending_id for a in shown[:MAX_LINKS]), len(shown) > MAX_LINKS


def _shown(others: Sequence[Card]) -> Shown:
    """What a card whose other members are ``others`` shows: an edit is needed only when
    this changes (past ``MAX_LINKS`` members a new one changes nothing: bounded edits)."""
    return tuple(c.pending_id for c in others[:MAX_LINKS]), len(others) > MAX_LINKS


def _ordered(cards: Sequence[Card]) -> list[Card]:
    return sorted(cards, key=lambda c: (c.created_at, c.pending_id))


def _others(card: Card, everyone: Sequence[Card], without: Card | None = None) -> list[Card]:
    gone = {card.pending_id, without.pending_id if without is not None else ""}
    return [c for c in everyone if c.pending_id not in gone]


@dataclass(frozen=True)
class GroupEdit:
    """The edit of ``card``'s channel card (where its group shows), once per ``reason``
    (``group:joined:<pending id>``, ``group:left:<pending id>``)."""

    card: Card
    reason: str


# ---- the ports ---------------------------------------------------------------------------------


class GroupCards(Protocol):
    def get(self, pending_id: str) -> Card | None: ...

    def same_question(
        self,
        question_key: str,
        channel: str,
        *,
        exclude: str = "",
        resolved_since_of: str | None = None,
        limit: int = 50,
    ) -> list[Card]: ...


@dataclass(eq=False)
class GroupLines:
    """A card's group and the edits of its members' lines (built once in the composition root)."""

    cards: GroupCards

    def members(self, card: Card) -> list[Card]:
        """The other waiting members of ``card``'s group (none for a card never grouped)."""
        key = group_key(card)
        if key is None:
            return []
        found = self.cards.same_question(
            key, card.channel, exclude=card.pending_id, limit=MAX_GROUP
        )
        return [m for m in found if groupable(m)]

    def also_asked(self, card: Card) -> tuple[AlsoAsked, ...]:
        """What ``card`` shows of its group (only while it waits, on its channel card; also
        when it is being posted)."""
        if not one_question(card) or card.state is not CardState.PENDING:
            return ()
        return also_asked(self.members(card))

    # ---- membership changes: the other members' cards are edited ---------------------------

    def edits_when_posted(
        self, card: Card, rendered: Sequence[AlsoAsked] | None = None
    ) -> list[GroupEdit]:
        """``card`` was just posted: the members whose line changes show it, and it shows
        them unless it was ``rendered`` with what it would show now (None: not known)."""
        if not groupable(card):
            return []
        members = self.members(card)
        if not members:
            return []
        reason = f"{GROUP_REASON}joined:{card.pending_id}"
        everyone = _ordered([*members, card])
        edits = [
            GroupEdit(m, reason)
            for m in members
            if _shown(_others(m, everyone)) != _shown(_others(m, everyone, card))
        ]
        if rendered is None or _shown_ids(rendered) != _shown(members):
            edits.append(GroupEdit(card, reason))
        return edits

    def edits_when_resolved(self, card: Card) -> list[GroupEdit]:
        """``card`` left its group (resolved): the members still waiting whose line showed it
        drop it."""
        if not card.state.terminal or card.ts is None or group_key(card) is None:
            return []
        reason = f"{GROUP_REASON}left:{card.pending_id}"
        members = self.members(card)
        everyone = _ordered([*members, card])
        return [
            GroupEdit(m, reason)
            for m in members
            if _shown(_others(m, everyone)) != _shown(_others(m, everyone, card))
        ]

    # ---- answering all -------------------------------------------------------------------
