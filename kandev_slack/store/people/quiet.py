"""Quiet hours in the store: each person's own, and what waits for quiet hours to end.

A held item is one row per key (a reminder step, an escalation, a DM card), inserted in the
transaction that claimed the step instead of its Slack writes (so a claimed step is never lost,
nor sent twice). :meth:`QuietMixin.release_held` claims every due row of one target in one
``UPDATE`` (``released_at`` set once, whichever replica runs it) and enqueues that target's one
summary in the same transaction: released once, through the outbox.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Connection

from kandev_slack.core.timing.quiet import HeldRow, QuietError, QuietHours, Released, quiet_hours
from kandev_slack.store.base import Repository, insert_unless_exists
from kandev_slack.store.kinds import NOTICE
from kandev_slack.store.queues.outbox import OutboxRepository
from kandev_slack.store.schema import held_items, quiet_people

#: The outbox write of one summary: (kind, dedupe key, payload); posted to its target.
SummaryWrite = tuple[str, str, dict[str, Any]]


class QuietMixin(Repository):
    """People's quiet hours and the held items (part of the follow-ups repository)."""

    _outbox: OutboxRepository

    def quiet_of(self, user_id: str) -> QuietHours | None:
        with self._read() as conn:
            row = conn.execute(
                select(quiet_people).where(quiet_people.c.user_id == user_id)
            ).first()
        return _hours(row) if row else None

    def quiet_people(self) -> dict[str, QuietHours]:
        """Everyone's own quiet hours (one read per round of the workers)."""
        with self._read() as conn:
            rows = conn.execute(select(quiet_people)).all()
        found = {row.user_id: _hours(row) for row in rows}
        return {user: hours for user, hours in found.items() if hours is not None}

    def quiet_set(self, user_id: str, hours: QuietHours) -> None:
        with self._write() as conn:
            conn.execute(delete(quiet_people).where(quiet_people.c.user_id == user_id))
            conn.execute(
                quiet_people.insert().values(
                    user_id=user_id, hours=hours.text(), tz=hours.tz, updated_at=self._now()
                )
            )

    def quiet_clear(self, user_id: str) -> bool:
        """Remove a person's quiet hours; what waits for them is released at the next round.
        False when they had none."""
        with self._write() as conn:
            removed = conn.execute(
                delete(quiet_people).where(quiet_people.c.user_id == user_id)
            ).rowcount
            conn.execute(
                update(held_items)
                .where(held_items.c.target == user_id, held_items.c.released_at.is_(None))
                .values(release_at=self._now())
            )
        return bool(removed)

    def _hold(self, conn: Connection, rows: Sequence[HeldRow]) -> None:
        """Record ``rows`` inside the caller's transaction (a claim's); one per key."""
        for row in rows:
            conn.execute(
                insert_unless_exists(conn, held_items, "key").values(
                    key=row.key,
                    target=row.target,
                    pending_id=row.pending_id,
                    what=row.what,
                    release_at=row.release_at,
                    released_at=None,
                    created_at=self._now(),
                )
            )

    def held_due(self) -> list[str]:
        """The targets with held items whose quiet hours are over (index ix_held_items_due)."""
        stmt = (
            select(held_items.c.target)
            .where(held_items.c.released_at.is_(None), held_items.c.release_at <= self._now())
            .distinct()
            .order_by(held_items.c.target)
        )
        with self._read() as conn:
            return [str(target) for target in conn.execute(stmt).scalars()]

    def release_held(
        self, target: str, summary: Callable[[list[Released]], SummaryWrite]
    ) -> list[Released]:
        """Claim every due held item of ``target`` (once, whichever replica asks) and, in the
        same transaction, enqueue its ``summary`` (a write of no card: NOTICE); [] when
        another replica claimed them."""
        stmt = (
            update(held_items)
            .where(
                held_items.c.target == target,
                held_items.c.released_at.is_(None),
                held_items.c.release_at <= self._now(),
            )
            .values(released_at=self._now())
            .returning(held_items.c.key, held_items.c.pending_id, held_items.c.what)
        )
        with self._write() as conn:
            rows = conn.execute(stmt).all()
            released = sorted(
                (Released(str(r.key), str(r.pending_id), str(r.what)) for r in rows),
                key=lambda r: r.key,
            )
            if released:
                kind, key, payload = summary(released)
                self._outbox.outbox_insert(conn, kind, key, payload, target, item_kind=NOTICE)
        return released

    def held_purge(self, older_than_s: float) -> int:
        """Forget released items after ``older_than_s`` (bounded: retention)."""
        with self._write() as conn:
            return int(
                conn.execute(
                    delete(held_items).where(
                        held_items.c.released_at.is_not(None),
                        held_items.c.released_at < self._ago(older_than_s),
                    )
                ).rowcount
            )


def _hours(row: Any) -> QuietHours | None:
    try:
        return quiet_hours(row.hours, row.tz)
    except QuietError:  # a time zone this machine does not know: not quiet (never held)
        return None
