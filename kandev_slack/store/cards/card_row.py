"""How a ``cards`` row becomes a :class:`kandev_slack.core.domain.Card` (shared by the repositories
that read cards: cards and their copies, follow-ups)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from kandev_slack.core.claims import Claim
from kandev_slack.core.domain import (
    Card,
    CardOutcome,
    CardState,
    Item,
    PastAnswer,
    TaskInfo,
    UnknownKind,
)
from kandev_slack.core.pending import known_kind

#: The columns a Card takes as they are (the others are decoded).
_AS_STORED = (
    "pending_id",
    "task_id",
    "session_id",
    "workspace_id",
    "channel",
    "ts",
    "thread_of",
    "thread_ts",
)
_STAMPS = ("created_at", "updated_at")
#: ``bundle_json`` holds the card's item: a bundle, or an approval (which says so in ``type``).
_ITEM: TypeAdapter[Item] = TypeAdapter(Item)


def card_from_row(row: Any) -> Card:
    """The card a row holds. Raises :class:`UnknownKind` for a card of a kind this release
    does not know (a newer release's: left alone, never read as a question). A waiting card
    of a kind older releases do not know is stored without a state
    (kandev_slack/store/kinds.py)."""
    kind = known_kind(row.kind)
    if kind is None:
        raise UnknownKind(row.pending_id, str(row.kind))
    stored = {name: getattr(row, name) for name in (*_AS_STORED, *_STAMPS)}
    card = Card(
        **stored,
        state=CardState(row.state or CardState.PENDING.value),
        item=_ITEM.validate_json(row.bundle_json),
        task=TaskInfo.model_validate_json(row.task_json),
        outcome=CardOutcome.model_validate_json(row.outcome_json) if row.outcome_json else None,
        past=PastAnswer.model_validate_json(row.past_json) if row.past_json else None,
        claim=_claim(row),
        paused_s=float(row.claim_paused_s or 0.0),
    )
    if card.kind is not kind:
        raise UnknownKind(row.pending_id, str(row.kind))
    return card


def _claim(row: Any) -> Claim | None:
    if not (row.claim_user and row.claim_since and row.claim_until):
        return None
    return Claim(user_id=row.claim_user, since=row.claim_since, until=row.claim_until)
