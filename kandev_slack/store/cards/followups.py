"""Follow-ups of waiting cards: which reminder step each is at, and whether it was escalated.

A step is taken by one compare-and-set ``UPDATE`` that also checks, in the same statement,
that the card is still waiting; the Slack writes the step needs are enqueued in the outbox in
the same transaction. So each step happens once across replicas and restarts, never for a
resolved bundle, and a taken step is never lost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement, Label

from kandev_slack.core.domain import Card, CardState
from kandev_slack.core.timing.calm import WINDOW_S, calm_choice
from kandev_slack.core.timing.quiet import HeldRow
from kandev_slack.store.base import Sql, insert_unless_exists
from kandev_slack.store.cards.card_row import card_from_row as _card
from kandev_slack.store.cards.copies import CopyKind, message_values
from kandev_slack.store.kinds import NOTICE, in_state
from kandev_slack.store.people.quiet import QuietMixin
from kandev_slack.store.people.subscriptions import SubscriptionsMixin
from kandev_slack.store.queues.outbox import OutboxRepository
from kandev_slack.store.schema import card_followups, card_messages, cards, dm_gathers

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


#: The writes of a gathering DM a DM card joined: (gathering key, the card's message key) →
#: the outbox rows to enqueue (its post, its count's edit).
Gathered = Callable[[str, str], Sequence[OutboxRow]]


class FollowupsRepository(SubscriptionsMixin, QuietMixin):
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
            select(
                cards,
                _followup(card_followups.c.reminders_sent),
                _followup(card_followups.c.escalated),
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
            .where(
                _WAITING,
                cards.c.ts.is_not(None),
                func.coalesce(_followup(card_followups.c.notified), 0) == 0,
            )
            .order_by(cards.c.created_at, cards.c.pending_id)
        )
        with self._read() as conn:
            return [_card(row) for row in conn.execute(stmt).all()]

    def mark_notified(
        self,
        pending_id: str,
        messages: Sequence[NewCopy],
        writes: Sequence[OutboxRow],
        held: Sequence[HeldRow] = (),
        gathered: Gathered | None = None,
    ) -> bool:
        """Decide the subscribers' DM cards of ``pending_id`` once, while it is still waiting,
        recording ``messages``, enqueueing ``writes`` and holding ``held`` (quiet hours).
        ``gathered`` (calm DMs, kandev_slack/core/timing/calm.py): each DM card is placed alone or
        in
        a gathering DM's thread in the same transaction (serialised per person), and the
        gathering's writes it returns (its post, its count's edit) are enqueued."""
        return self._take_step(
            pending_id,
            card_followups.c.notified == 0,
            {"notified": 1},
            writes,
            messages,
            held,
            gathered,
        )

    def advance_reminder(
        self,
        pending_id: str,
        step: int,
        writes: Sequence[OutboxRow],
        held: Sequence[HeldRow] = (),
    ) -> bool:
        """Move ``pending_id`` to reminder ``step`` (from any earlier step) while it is still
        waiting, enqueueing ``writes`` (or holding ``held``): True for exactly one caller per
        step."""
        return self._take_step(
            pending_id,
            card_followups.c.reminders_sent < step,
            {"reminders_sent": step},
            writes,
            (),
            held,
        )

    def mark_escalated(
        self,
        pending_id: str,
        messages: Sequence[NewCopy],
        writes: Sequence[OutboxRow],
        held: Sequence[HeldRow] = (),
    ) -> bool:
        """Mark ``pending_id`` escalated while it is still waiting, recording ``messages`` and
        enqueueing ``writes`` (or holding ``held``): True for exactly one caller ever."""
        return self._take_step(
            pending_id, card_followups.c.escalated == 0, {"escalated": 1}, writes, messages, held
        )

    def _take_step(
        self,
        pending_id: str,
        condition: Any,
        values: dict[str, Any],
        writes: Sequence[OutboxRow],
        messages: Sequence[NewCopy],
        held: Sequence[HeldRow] = (),
        gathered: Gathered | None = None,
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
                thread = None
                if gathered is not None and message.kind == "dm":
                    thread = self._gather(conn, message.target, message.key)
                values = message_values(
                    message.key, pending_id, message.kind, message.target, message.note, now
                )
                inserted = conn.execute(
                    insert_unless_exists(conn, card_messages, "key")
                    .values(**values | {"thread": thread})
                    .returning(card_messages.c.key)
                ).first()
                if thread is not None and inserted is not None and gathered is not None:
                    for write in gathered(thread, message.key):
                        self._outbox.outbox_insert(
                            conn,
                            write.kind,
                            write.key,
                            write.payload,
                            write.channel,
                            item_kind=NOTICE,
                        )
            for write in writes:
                self._outbox.outbox_insert(
                    conn, write.kind, write.key, write.payload, write.channel
                )
            self._hold(conn, held)
        return True

    def _gather(self, conn: Connection, user_id: str, message_key: str) -> str | None:
        """Where a new DM card for ``user_id`` goes (kandev_slack/core/timing/calm.py): the key of
        the gathering DM whose thread it joins (opened now if need be), or None: alone. On
        PostgreSQL one transaction at a time decides for one person (an advisory lock)."""
        if conn.dialect.name == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(func.hashtext(f"calm:{user_id}"))))
        window = self._ago(WINDOW_S)
        open_key = conn.execute(
            select(dm_gathers.c.key)
            .where(dm_gathers.c.user_id == user_id, dm_gathers.c.last_at > window)
            .order_by(dm_gathers.c.last_at.desc())
            .limit(1)
        ).scalar()
        recent = 0
        if open_key is None:
            recent = int(
                conn.execute(
                    select(func.count())
                    .select_from(card_messages)
                    .where(
                        card_messages.c.target == user_id,
                        card_messages.c.created_at > window,
                        card_messages.c.kind == "dm",
                        card_messages.c.thread.is_(None),
                    )
                ).scalar_one()
            )
        choice = calm_choice(open_key is not None, recent)
        if choice == "alone":
            return None
        if choice == "join" and open_key is not None:
            conn.execute(
                update(dm_gathers).where(dm_gathers.c.key == open_key).values(last_at=self._now())
            )
            return str(open_key)
        key = f"gather:{user_id}:{message_key}"
        conn.execute(
            insert_unless_exists(conn, dm_gathers, "key").values(
                key=key,
                user_id=user_id,
                since=window,
                last_at=self._now(),
                channel=None,
                ts=None,
                created_at=self._now(),
            )
        )
        return key


def _followup(column: ColumnElement[Any]) -> Label[Any]:
    """A waiting card's follow-up ``column``, read per card through the primary key: a
    subquery rather than a join, which PostgreSQL would run as a hash join reading every
    card's follow-up row (one per card of the whole history) to match the few waiting."""
    return (
        select(column)
        .where(card_followups.c.pending_id == cards.c.pending_id)
        .scalar_subquery()
        .label(column.name)
    )
