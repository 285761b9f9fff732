"""Follow-ups of waiting cards: which reminder step each is at, and whether it was escalated.

A step is taken by one compare-and-set ``UPDATE`` that also checks, in the same statement,
that the card is still waiting; the Slack writes the step needs are enqueued in the outbox in
the same transaction. So each step happens once across replicas and restarts, never for a
resolved bundle, and a taken step is never lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, or_, select, update

from kandev_slack.core.domain import Card, CardState
from kandev_slack.store.base import Sql, insert_unless_exists
from kandev_slack.store.cards.card_row import card_from_row as _card
from kandev_slack.store.cards.copies import CopyKind, message_values
from kandev_slack.store.kinds import in_state
from kandev_slack.store.people.subscriptions import SubscriptionsMixin
from kandev_slack.store.queues.outbox import OutboxRepository
from kandev_slack.store.schema import card_followups, card_messages, cards

_WAITING = in_state(CardState.PENDING)


@dataclass(frozen=True)
class Waiting:
    """A waiting, posted card and how far its follow-ups went."""

    card: Card
    reminders_sent: int
    escalated: bool


@dataclass(frozen=True)
class OutboxRow:
    """An outbox write to enqueue with a taken step (see ``OutboxRepository.outbox_insert``)."""

    kind: str
    key: str
    payload: dict[str, Any]
    channel: str | None


@dataclass(frozen=True)
class NewCopy:
    """One more message of the bundle to record with a taken step (an escalation card)."""

    key: str
    kind: CopyKind
    target: str
    note: str


class FollowupsRepository(SubscriptionsMixin):
    """Follow-ups of waiting cards (reminder steps, escalation, subscribers' DM cards) and
    the subscriptions that decide who gets a DM card. A taken step's Slack writes go in
    the same transaction through ``outbox`` (the shared outbox repository)."""

    def __init__(self, sql: Sql, outbox: OutboxRepository) -> None:
        super().__init__(sql)
        self._outbox = outbox

    def db_now(self) -> datetime:
        """The database's now (the clock every follow-up age is measured with)."""
        with self._read() as conn:
            return conn.execute(select(self._now())).scalar_one()

    def waiting_posted(self) -> list[Waiting]:
        """Every waiting card whose channel card is posted, with its follow-up state."""
        stmt = (
            select(cards, card_followups.c.reminders_sent, card_followups.c.escalated)
            .select_from(
                cards.outerjoin(card_followups, card_followups.c.pending_id == cards.c.pending_id)
            )
            .where(_WAITING, cards.c.ts.is_not(None))
            .order_by(cards.c.created_at, cards.c.pending_id)
        )
        with self._read() as conn:
            rows = conn.execute(stmt).all()
        return [
            Waiting(_card(row), int(row.reminders_sent or 0), bool(row.escalated)) for row in rows
        ]

    def unnotified_posted(self) -> list[Card]:
        """Waiting, posted cards whose subscribers' DM cards were not decided yet."""
        stmt = (
            select(cards)
            .select_from(
                cards.outerjoin(card_followups, card_followups.c.pending_id == cards.c.pending_id)
            )
            .where(
                _WAITING,
                cards.c.ts.is_not(None),
                or_(card_followups.c.notified.is_(None), card_followups.c.notified == 0),
            )
            .order_by(cards.c.created_at, cards.c.pending_id)
        )
        with self._read() as conn:
            return [_card(row) for row in conn.execute(stmt).all()]

    def mark_notified(
        self, pending_id: str, messages: Sequence[NewCopy], writes: Sequence[OutboxRow]
    ) -> bool:
        """Decide the subscribers' DM cards of ``pending_id`` once, while it is still waiting,
        recording ``messages`` and enqueueing ``writes``."""
        return self._take_step(
            pending_id, card_followups.c.notified == 0, {"notified": 1}, writes, messages
        )

    def advance_reminder(self, pending_id: str, step: int, writes: Sequence[OutboxRow]) -> bool:
        """Move ``pending_id`` to reminder ``step`` (from any earlier step) while it is still
        waiting, enqueueing ``writes``: True for exactly one caller per step."""
        return self._take_step(
            pending_id,
            card_followups.c.reminders_sent < step,
            {"reminders_sent": step},
            writes,
            (),
        )

    def mark_escalated(
        self, pending_id: str, messages: Sequence[NewCopy], writes: Sequence[OutboxRow]
    ) -> bool:
        """Mark ``pending_id`` escalated while it is still waiting, recording ``messages`` and
        enqueueing ``writes``: True for exactly one caller ever."""
        return self._take_step(
            pending_id, card_followups.c.escalated == 0, {"escalated": 1}, writes, messages
        )

    def _take_step(
        self,
        pending_id: str,
        condition: Any,
        values: dict[str, Any],
        writes: Sequence[OutboxRow],
        messages: Sequence[NewCopy],
    ) -> bool:
        now = self._now()
        still_waiting = exists().where(cards.c.pending_id == pending_id, _WAITING)
        with self._write() as conn:
            conn.execute(
                insert_unless_exists(conn, card_followups, "pending_id").values(
                    pending_id=pending_id, reminders_sent=0, escalated=0, updated_at=now
                )
            )
            claimed = conn.execute(
                update(card_followups)
                .where(card_followups.c.pending_id == pending_id, condition, still_waiting)
                .values(**values, updated_at=now)
            ).rowcount
            if claimed != 1:
                return False
            for message in messages:
                conn.execute(
                    insert_unless_exists(conn, card_messages, "key").values(
                        **message_values(
                            message.key,
                            pending_id,
                            message.kind,
                            message.target,
                            message.note,
                            now,
                        )
                    )
                )
            for write in writes:
                self._outbox.outbox_insert(
                    conn, write.kind, write.key, write.payload, write.channel
                )
        return True
