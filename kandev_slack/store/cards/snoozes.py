"""Snoozes (kandev_slack/core/snooze.py): who hid which waiting question from their own views until
when.

Every change is one statement that checks, as a compare-and-set, the snooze as the caller read
it (none, or its token), and the writes it needs — the edits of the person's DM cards, a notice
in their threads — are enqueued in the outbox in the same transaction. So a snooze ending on two
replicas at once ends once, with one "Back from snooze" notice, and no change is made without
being shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, exists, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from kandev_slack.core.snooze import Snooze
from kandev_slack.store.base import Repository, Sql
from kandev_slack.store.cards.followups import OutboxRow
from kandev_slack.store.kinds import resolved as kind_resolved
from kandev_slack.store.queues.outbox import OutboxRepository
from kandev_slack.store.schema import cards, snoozes

#: At most this many ended snoozes are read per round of the worker.
DUE_LIMIT = 200


def _snooze(row: Any) -> Snooze:
    return Snooze(**row._mapping)  # the columns of snoozes are its fields


class SnoozesRepository(Repository):
    def __init__(self, sql: Sql, outbox: OutboxRepository) -> None:
        super().__init__(sql)
        self._outbox = outbox

    def snooze_now(self) -> datetime:
        """The database's now (snoozes start and end by it, whichever replica sets them)."""
        with self._read() as conn:
            return conn.execute(select(self._now())).scalar_one()

    def snooze_of(self, user_id: str, pending_id: str) -> Snooze | None:
        """The person's snooze of the item, ended or not (None: none is recorded)."""
        stmt = select(snoozes).where(
            snoozes.c.user_id == user_id, snoozes.c.pending_id == pending_id
        )
        with self._read() as conn:
            row = conn.execute(stmt).first()
        return _snooze(row) if row is not None else None

    def active_snooze(self, user_id: str, pending_id: str) -> Snooze | None:
        """The person's snooze of the item while it holds (by the database's now)."""
        stmt = select(snoozes).where(
            snoozes.c.user_id == user_id,
            snoozes.c.pending_id == pending_id,
            snoozes.c.until > self._now(),
        )
        with self._read() as conn:
            row = conn.execute(stmt).first()
        return _snooze(row) if row is not None else None

    def snoozes_of(self, user_id: str) -> list[Snooze]:
        """The person's snoozes that hold now, ending first first."""
        stmt = (
            select(snoozes)
            .where(snoozes.c.user_id == user_id, snoozes.c.until > self._now())
            .order_by(snoozes.c.until, snoozes.c.pending_id)
        )
        with self._read() as conn:
            return [_snooze(row) for row in conn.execute(stmt).all()]

    def due_snoozes(self, limit: int = DUE_LIMIT) -> list[Snooze]:
        """Snoozes that ended (by the database's now) or whose item was resolved meanwhile,
        ending first first."""
        resolved = exists().where(
            cards.c.pending_id == snoozes.c.pending_id,
            kind_resolved(),
        )
        stmt = (
            select(snoozes)
            .where(or_(snoozes.c.until <= self._now(), resolved))
            .order_by(snoozes.c.until, snoozes.c.user_id, snoozes.c.pending_id)
            .limit(limit)
        )
        with self._read() as conn:
            return [_snooze(row) for row in conn.execute(stmt).all()]

    def next_end_s(self) -> float | None:
        """Seconds until the soonest snooze ends, by the database's clock (0: one ended
        already); None: nobody snoozes anything."""
        now_sql = self._now()
        with self._read() as conn:
            soonest, now = conn.execute(select(func.min(snoozes.c.until), now_sql)).one()
        return None if soonest is None else max((soonest - now).total_seconds(), 0.0)

    def put_snooze(
        self, snooze: Snooze, read_token: str | None, writes: Sequence[OutboxRow]
    ) -> bool:
        """Record ``snooze`` in place of the one read (``read_token``; None: none was),
        enqueueing ``writes``: True for exactly one of several callers that read the same."""
        values = snooze.model_dump()
        with self._write() as conn:
            if read_token is None:  # a new one: inserted unless someone's is there already
                make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
                stmt = (
                    make(snoozes)
                    .values(**values)
                    .on_conflict_do_nothing(index_elements=["user_id", "pending_id"])
                    .returning(snoozes.c.token)
                )
                made = conn.execute(stmt).first() is not None
            else:
                changed = conn.execute(
                    update(snoozes)
                    .where(_as_read(snooze.user_id, snooze.pending_id, read_token))
                    .values(until=snooze.until, hours=snooze.hours, token=snooze.token)
                )
                made = changed.rowcount == 1
            if not made:
                return False
            self._enqueue(conn, writes)
        return True

    def end_snooze(
        self, user_id: str, pending_id: str, token: str, writes: Sequence[OutboxRow]
    ) -> bool:
        """Delete the snooze ``token`` names (Unsnooze, or its end), enqueueing ``writes``:
        True for exactly one of several callers."""
        with self._write() as conn:
            gone = conn.execute(delete(snoozes).where(_as_read(user_id, pending_id, token)))
            if gone.rowcount != 1:
                return False
            self._enqueue(conn, writes)
        return True

    def _enqueue(self, conn: Any, writes: Sequence[OutboxRow]) -> None:
        for write in writes:
            self._outbox.outbox_insert(conn, write.kind, write.key, write.payload, write.channel)


def _as_read(user_id: str, pending_id: str, token: str) -> Any:
    return and_(
        snoozes.c.user_id == user_id,
        snoozes.c.pending_id == pending_id,
        snoozes.c.token == token,
    )
