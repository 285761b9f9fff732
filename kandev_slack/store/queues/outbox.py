"""The outbox: Slack writes kept durably until done, leased so two replicas never share one."""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    Update,
    and_,
    bindparam,
    case,
    delete,
    func,
    literal,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.engine import Connection

from kandev_slack.kinds.registry import item_kind_of_payload
from kandev_slack.store.base import insert_unless_exists
from kandev_slack.store.kinds import waiting_state, write_waiting, write_waiting_status
from kandev_slack.store.queues.pace import PaceMixin
from kandev_slack.store.records import OutboxEntry, OutboxStatus
from kandev_slack.store.schema import outbox
from kandev_slack.store.sql.types import UTCDateTime, require_aware

_PENDING = OutboxStatus.PENDING.value
#: Not done yet (stored as 'pending', or NULL for a kind older releases do not know), of a card
#: of a kind this release knows: kandev_slack/store/kinds.py.
_OPEN = write_waiting()
_FAILED = OutboxStatus.FAILED.value
#: done or failed: ``IN`` (not ``!= pending``) so that ``ix_outbox_finished`` is used.
_FINISHED = (OutboxStatus.DONE.value, _FAILED)


#: The outbox columns an OutboxEntry names otherwise (every other column is its field).
_FIELD_OF = {"dedupe_key": "key", "payload_json": "payload"}


def _deferred_before_a_step_back(now: ColumnElement[Any]) -> ColumnElement[bool]:
    """The item was last given back at a time later than ``now``: the clock stepped back
    since, and what is left of its wait is longer than the wait it was given."""
    return outbox.c.updated_at > now


def _taking(
    at: ColumnElement[Any], until: ColumnElement[Any], kinds: tuple[str, ...] | None
) -> tuple[Select[Any], Update]:
    """``outbox_take``'s two statements: the ids of the items due at ``at`` (``limit`` of
    them, of ``kinds``), and the lease of those ``ids`` to ``worker`` until ``until``."""
    due = and_(
        _OPEN,
        or_(outbox.c.not_before <= at, _deferred_before_a_step_back(at)),
        or_(outbox.c.lease_until.is_(None), outbox.c.lease_until <= at),
    )
    if kinds is not None:
        due = and_(due, outbox.c.kind.in_(list(kinds)))
    chosen = (
        select(outbox.c.id)
        .where(due)
        .order_by(outbox.c.not_before, outbox.c.id)
        .limit(bindparam("limit"))
        .with_for_update(skip_locked=True)
    )
    lease = (
        update(outbox)
        .where(outbox.c.id.in_(bindparam("ids", expanding=True)))
        .values(
            lease_owner=bindparam("worker"),
            lease_until=until,
            attempts=outbox.c.attempts + 1,
            updated_at=at,
        )
        .returning(*outbox.c)
    )
    return chosen, lease


def _entry(row: Any) -> OutboxEntry:
    values = {_FIELD_OF.get(name, name): value for name, value in row._mapping.items()}
    status = values["status"] or _PENDING
    return OutboxEntry(**{**values, "status": status, "payload": json.loads(values["payload"])})


class OutboxRepository(PaceMixin):
    """The outbox (Slack writes kept until done, leased to one worker at a time) and the
    per-channel posting slots that pace them (pace.py)."""

    def outbox_put(
        self,
        kind: str,
        key: str | None,
        payload: dict[str, Any],
        channel: str | None = None,
        not_before: datetime | None = None,
        *,
        delay_s: float = 0.0,
    ) -> int | None:
        """Enqueue a write; returns its id, or None when ``key`` was enqueued before.

        A key stays taken after its row is done (so a redelivered event cannot repeat an
        edit) until :meth:`outbox_purge` removes the row. ``key=None`` never deduplicates.
        ``delay_s``: due that many seconds after the database's now (a write of low priority:
        those enqueued meanwhile go first), unless ``not_before`` says when.
        """
        with self._write() as conn:
            new_id = self.outbox_insert(
                conn, kind, key, payload, channel, not_before, delay_s=delay_s
            )
        return None if new_id is None else int(new_id)

    def outbox_insert(
        self,
        conn: Connection,
        kind: str,
        key: str | None,
        payload: dict[str, Any],
        channel: str | None = None,
        not_before: datetime | None = None,
        item_kind: str | None = None,
        *,
        delay_s: float = 0.0,
    ) -> int | None:
        """:meth:`outbox_put` inside a transaction of the caller's (e.g. the one claiming the
        step that needs the write, so both happen or neither). ``item_kind``: for a write of
        no card (:data:`kandev_slack.store.kinds.NOTICE`), else the card's kind."""
        # Its waiting state may be SQL (kandev_slack/store/kinds.py): part of the statement.
        kind_of_item = (
            item_kind
            if item_kind is not None
            else item_kind_of_payload(payload.get("pending_id")).value
        )
        # When it is due: now, a given time (bound) or a delay (part of the statement).
        delay = delay_s if not_before is None and delay_s > 0 else None
        given = not_before is not None

        def build() -> Any:
            now = self._now()
            due: Any = bindparam("due") if given else now
            if delay is not None:
                due = self._at(delay)
            return (
                insert_unless_exists(conn, outbox, "dedupe_key")
                .values(
                    status=waiting_state(kind_of_item),
                    not_before=due,
                    created_at=now,
                    updated_at=now,
                )
                .returning(outbox.c.id)
            )

        stmt = self._prepared(("outbox.insert", kind_of_item, given, delay), build)
        values: dict[str, Any] = {
            "kind": kind,
            "item_kind": kind_of_item,
            "dedupe_key": key,
            "channel": channel,
            "payload_json": json.dumps(payload),
            "attempts": 0,
            "lease_owner": None,
            "lease_until": None,
            "last_error": "",
            "finished_at": None,
        }
        if not_before is not None:
            values["due"] = require_aware(not_before)
        new_id = conn.execute(stmt, values).scalar_one_or_none()
        return None if new_id is None else int(new_id)

    def outbox_take(
        self,
        now: datetime | None,
        limit: int,
        worker_id: str,
        lease_s: float = 30.0,
        kinds: Collection[str] | None = None,
    ) -> list[OutboxEntry]:
        """Lease up to ``limit`` due items (not_before <= now, no live lease) to ``worker_id``
        for ``lease_s`` seconds, oldest due first. An item given back before the clock stepped
        back is due (its wait, kept in the old time, would outlast its own interval).

        In one transaction: ``SELECT ... FOR UPDATE SKIP LOCKED`` picks the ids (on PostgreSQL
        concurrent takers skip each other's rows; on SQLite ``BEGIN IMMEDIATE`` serialises
        them), then one ``UPDATE ... RETURNING`` leases exactly those. An item whose lease ran
        out (its worker died) is due again.
        """
        kinds_key = None if kinds is None else tuple(sorted(kinds))
        if now is None:
            chosen, lease = self._prepared(
                ("outbox.take", lease_s, kinds_key),
                lambda: _taking(self._now(), self._at(lease_s), kinds_key),
            )
        else:  # an explicit time (tests)
            now = require_aware(now)
            at = literal(now, UTCDateTime())
            until = literal(now + timedelta(seconds=lease_s), UTCDateTime())
            chosen, lease = _taking(at, until, kinds_key)
        with self._write() as conn:
            ids = list(conn.scalars(chosen, {"limit": limit}))
            if not ids:
                return []
            rows = conn.execute(lease, {"ids": ids, "worker": worker_id}).all()
        return sorted((_entry(row) for row in rows), key=lambda item: (item.not_before, item.id))

    def outbox_done(self, entry_id: int, *, worker_id: str | None = None) -> bool:
        """The write happened: the item is finished for good (its key stays taken). With
        ``worker_id``: only while that worker still holds the lease (see :meth:`_held`)."""
        return self._finish(entry_id, OutboxStatus.DONE, None, worker_id)

    def outbox_fail(self, entry_id: int, error: str, *, worker_id: str | None = None) -> bool:
        """The write can never succeed (e.g. channel_not_found): stop retrying it."""
        return self._finish(entry_id, OutboxStatus.FAILED, error, worker_id)

    def outbox_retry(
        self,
        entry_id: int,
        not_before: datetime | float,
        error: str,
        *,
        worker_id: str | None = None,
        slot: bool = False,
        holding: datetime | None = None,
    ) -> bool:
        """Give the lease back and try again at ``not_before``: a time, or a number of seconds
        from the database's now (e.g. Retry-After). With ``worker_id``, only while that worker
        still holds the lease (an item another worker took over, or whose lease ran out while
        its worker was frozen, is left alone). ``slot``:
        ``not_before`` is the posting slot the item was given (see pace.py) and it keeps it;
        ``holding``: the slot it keeps while it waits until ``not_before`` (its channel's pace
        row was locked when its slot came); otherwise any slot it held is given up."""
        due = (
            require_aware(not_before)
            if isinstance(not_before, datetime)
            else self._at(float(not_before))
        )
        with self._write() as conn:
            stmt = (
                update(outbox)
                .where(outbox.c.id == entry_id, _OPEN, self._held(worker_id))
                .values(
                    not_before=due,
                    slot_at=due if slot else holding,
                    last_error=error,
                    lease_owner=None,
                    lease_until=None,
                    updated_at=self._now(),
                )
            )
            return conn.execute(stmt, {"worker": worker_id}).rowcount == 1

    def outbox_absorb(self, key_prefix: str, besides: int, worker_id: str) -> list[int]:
        """Finish, as done, the waiting items whose key starts with ``key_prefix`` besides
        ``besides`` (the item about to be written) — those nobody holds, and those
        ``worker_id`` holds itself — for the write about to be made covers them (e.g. the
        edits of one card to its current state, read after this). Their ids. A range on the
        key's unique index, on both backends."""
        now = self._now()
        held_by_another = and_(
            outbox.c.lease_until.is_not(None),
            outbox.c.lease_until > now,
            outbox.c.lease_owner != worker_id,
        )
        with self._write() as conn:
            stmt = (
                update(outbox)
                .where(
                    # The range is for the index; the prefix itself decides (a collation may
                    # order keys otherwise than by their characters).
                    outbox.c.dedupe_key >= key_prefix,
                    outbox.c.dedupe_key < key_prefix + "\U0010ffff",
                    func.substr(outbox.c.dedupe_key, 1, len(key_prefix)) == key_prefix,
                    outbox.c.id != besides,
                    _OPEN,
                    ~held_by_another,
                )
                .values(
                    status=OutboxStatus.DONE.value,
                    lease_owner=None,
                    lease_until=None,
                    last_error="absorbed",
                    finished_at=now,
                    updated_at=now,
                )
                .returning(outbox.c.id)
            )
            return [int(row_id) for row_id in conn.scalars(stmt)]

    def outbox_note(self, entry_id: int, note: str, *, worker_id: str | None = None) -> bool:
        """Record progress on a leased item (e.g. "posting" just before a Slack write) so a
        worker that takes it over after a crash knows the write may already have happened.

        With ``worker_id`` it is the fence before the Slack call: False when that worker no
        longer holds a live lease on the item (it was frozen past its lease and another worker
        may have taken the item over), and then the worker must not make the call."""
        stmt = self._prepared(
            ("outbox.note", worker_id is None),
            lambda: (
                update(outbox)
                .where(outbox.c.id == bindparam("entry"), _OPEN, self._held(worker_id))
                .values(last_error=bindparam("note"), updated_at=self._now())
            ),
        )
        with self._write() as conn:
            values = {"entry": entry_id, "note": note, "worker": worker_id}
            return conn.execute(stmt, values).rowcount == 1

    def _held(self, worker_id: str | None) -> ColumnElement[bool]:
        """``worker_id`` holds a live lease (owner AND expiry, by the database's clock, in the
        statement that writes: a worker frozen past its lease is fenced off even if nobody has
        taken the item over yet); no condition without ``worker_id``. The worker's id is the
        bind parameter ``worker``, so a statement built once serves every worker
        (kandev_slack/store/base.py ``Sql.prepared``)."""
        if worker_id is None:
            return true()
        return and_(outbox.c.lease_owner == bindparam("worker"), outbox.c.lease_until > self._now())

    def outbox_renew(self, worker_id: str, lease_s: float) -> int:
        """Extend every lease ``worker_id`` holds to now + ``lease_s`` (its heartbeat).

        A live worker renews its leases while it waits on Slack, so leases can stay short and
        the items of a worker that died are taken over soon after its last heartbeat. Only live
        leases are renewed: a worker that wakes from a freeze longer than its lease has lost
        its items, whether or not another worker took them over yet.
        """
        with self._write() as conn:
            stmt = (
                update(outbox)
                .where(_OPEN, self._held(worker_id))
                .values(lease_until=self._at(lease_s))
            )
            return int(conn.execute(stmt, {"worker": worker_id}).rowcount)

    def outbox_release(self, worker_id: str, *, within_s: float | None = None) -> int:
        """Give back every item ``worker_id`` still holds, due now and owned by nobody (a
        worker that stops hands its work over at once instead of after its leases run out).
        A post's progress note stays, so whoever takes it looks for the card before posting.
        ``within_s``: the statement's bound (PostgreSQL), see ``Sql.write``."""
        with self._write(within_s) as conn:
            stmt = (
                update(outbox)
                .where(outbox.c.lease_owner == worker_id, _OPEN)
                .values(lease_owner=None, lease_until=None, updated_at=self._now())
            )
            return int(conn.execute(stmt).rowcount)

    def outbox_rearm(self, key: str) -> bool:
        """Make the finished item ``key`` due again (e.g. a card edit that ran as a no-op
        before the card's message existed); False when it is still pending or unknown."""
        now = self._now()
        with self._write() as conn:
            stmt = (
                update(outbox)
                .where(outbox.c.dedupe_key == key, outbox.c.status.in_(_FINISHED))
                .values(
                    status=write_waiting_status(),
                    attempts=0,
                    not_before=now,
                    slot_at=None,
                    lease_owner=None,
                    lease_until=None,
                    last_error="",
                    updated_at=now,
                    finished_at=None,
                )
            )
            return conn.execute(stmt).rowcount == 1

    def outbox_next_due_s(self, *, leased: bool = False) -> float | None:
        """Seconds until the soonest waiting (unleased) item falls due, by the database's clock
        (0 when one is due already); None when nothing waits. Whichever worker deferred it, any
        worker can wake for it (one that died deferred many a paced post). ``leased``: a
        leased item counts too, due when its lease runs out (a dead worker's item is
        :meth:`outbox_take`'s then): 0 exactly when a take would find something."""
        now_sql = self._now()
        due_at = case((_deferred_before_a_step_back(now_sql), now_sql), else_=outbox.c.not_before)
        if leased:
            lease_end = outbox.c.lease_until
            due_at = case(
                (and_(lease_end.is_not(None), lease_end > due_at), lease_end), else_=due_at
            )
            waiting = _OPEN
        else:
            waiting = and_(_OPEN, outbox.c.lease_until.is_(None))
        with self._read() as conn:
            soonest, now = conn.execute(select(func.min(due_at), now_sql).where(waiting)).one()
        if soonest is None:
            return None
        return max((soonest - now).total_seconds(), 0.0)

    def outbox_get(self, entry_id: int) -> OutboxEntry | None:
        with self._read() as conn:
            row = conn.execute(select(outbox).where(outbox.c.id == entry_id)).first()
        return _entry(row) if row else None

    def outbox_pending_count(self) -> int:
        """Items not yet done or failed (leased ones included)."""
        with self._read() as conn:
            stmt = select(func.count()).select_from(outbox).where(_OPEN)
            return int(conn.scalar(stmt) or 0)

    def outbox_failed_count(self, within_s: float | None = None) -> int:
        """Items marked failed (given up for good), optionally only those that failed within
        the last ``within_s`` seconds (for /healthz)."""
        stmt = select(func.count()).select_from(outbox).where(outbox.c.status == _FAILED)
        if within_s is not None:
            stmt = stmt.where(outbox.c.finished_at >= self._ago(within_s))
        with self._read() as conn:
            return int(conn.scalar(stmt) or 0)

    def outbox_purge(self, older_than_s: float) -> int:
        """Delete done/failed items finished over ``older_than_s`` ago (frees their keys)."""
        with self._write() as conn:
            stmt = delete(outbox).where(
                outbox.c.status.in_(_FINISHED), outbox.c.finished_at <= self._ago(older_than_s)
            )
            return int(conn.execute(stmt).rowcount)

    def _finish(
        self, entry_id: int, status: OutboxStatus, error: str | None, worker_id: str | None
    ) -> bool:
        stmt = self._prepared(
            ("outbox.finish", worker_id is None, error is None),
            lambda: self._finishing(worker_id, with_error=error is not None),
        )
        values = {"entry": entry_id, "to_status": status.value, "worker": worker_id}
        if error is not None:
            values["error"] = error
        with self._write() as conn:
            return conn.execute(stmt, values).rowcount == 1

    def _finishing(self, worker_id: str | None, *, with_error: bool) -> Update:
        now = self._now()
        values: dict[str, Any] = {
            "status": bindparam("to_status"),
            "lease_owner": None,
            "lease_until": None,
            "finished_at": now,
            "updated_at": now,
        }
        if with_error:
            values["last_error"] = bindparam("error")
        return (
            update(outbox)
            .where(outbox.c.id == bindparam("entry"), _OPEN, self._held(worker_id))
            .values(**values)
        )
