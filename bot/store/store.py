"""The durable store: one object over one Engine, safe to share between threads."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import TracebackType

from sqlalchemy import delete, func, select, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from bot.core.domain import CardState
from bot.store.audit import AuditMixin
from bot.store.base import Clock
from bot.store.cards import CardsMixin
from bot.store.copies import MessagesMixin
from bot.store.engine import make_engine
from bot.store.followups import FollowupsMixin
from bot.store.home import HomeViewersMixin
from bot.store.migrations import current_version, migrate
from bot.store.outbox import OutboxMixin
from bot.store.pace import PaceMixin
from bot.store.records import OutboxStatus
from bot.store.schema import (
    audit_log,
    card_followups,
    card_messages,
    cards,
    home_viewers,
    outbox,
    submissions,
)
from bot.store.submissions import SubmissionsMixin
from bot.store.subscriptions import SubscriptionsMixin
from bot.store.url import DEFAULT_DATABASE_URL, is_sqlite_memory, normalize_url
from bot.store.write_queue import WriteQueue

#: Finished outbox rows only keep their dedupe keys (a redelivered change is not re-sent):
#: after a week nothing re-sends them, so they are kept that long at most.
OUTBOX_KEEP = timedelta(days=7)
#: How long resolved cards, audit entries and Home viewers are kept (RETENTION_DAYS).
DEFAULT_RETENTION_DAYS = 90


@dataclass(frozen=True)
class StoreStats:
    """What the store holds that an operator watches (metrics, ``kandev-slack db status``)."""

    schema_version: int
    pending_cards: int
    oldest_pending_at: datetime | None  # when the oldest waiting card was claimed
    outbox_pending: int  # posts and edits not done yet
    outbox_failed: int  # given up for good (kept for a week)
    unfinished_submissions: int  # answers on their way to Kandev (or left by a crash)


@dataclass(frozen=True)
class Purged:
    """How many rows one :meth:`Store.purge` deleted, per table."""

    cards: int = 0
    submissions: int = 0
    outbox: int = 0
    audit: int = 0
    home_viewers: int = 0


class Store(
    CardsMixin,
    MessagesMixin,
    FollowupsMixin,
    SubmissionsMixin,
    AuditMixin,
    OutboxMixin,
    PaceMixin,
    HomeViewersMixin,
    SubscriptionsMixin,
):
    """Cards, submissions, the audit log, the outbox and the Home tab's recent viewers, on
    SQLite or PostgreSQL.

    Opening connects, creates or upgrades the schema (see migrations.py) and fails early with
    the database's own error when it cannot. Every timestamp the store writes and every lease
    it compares comes from the database's clock, never this process's: replicas on machines
    whose clocks differ share leases safely. ``clock`` (timezone-aware UTC) stands in for the
    database's clock in tests. ``retention_days``: what :meth:`purge` keeps by default.
    """

    def __init__(
        self,
        url: str | URL = DEFAULT_DATABASE_URL,
        *,
        clock: Clock | None = None,
        retention_days: int = DEFAULT_RETENTION_DAYS,
        upgrade: bool = True,
    ) -> None:
        self.retention = timedelta(days=retention_days)
        self.url = normalize_url(url)
        engine = make_engine(self.url)
        lock: AbstractContextManager[object] = (
            threading.RLock() if is_sqlite_memory(self.url) else nullcontext()
        )
        # SQLite lets one transaction write at a time, and a writer that finds the file locked
        # sleeps in SQLite's busy handler (1, 2, 5 … up to 100 ms at a time) before it looks
        # again: under a crowd, 32 threads writing at once waited up to a second. This
        # process's writers queue instead (those an ack waits for first, see write_queue.py)
        # and each goes the moment the last is done; the busy timeout still arbitrates between
        # processes sharing the file.
        sqlite_file = self.url.get_backend_name() == "sqlite" and not is_sqlite_memory(self.url)
        write_lock: AbstractContextManager[object] | None = WriteQueue() if sqlite_file else None
        try:
            if upgrade:  # without: only read what is there (``kandev-slack db status``)
                migrate(engine)
        except BaseException:
            engine.dispose()
            raise
        super().__init__(engine, clock, lock, write_lock)

    def close(self) -> None:
        """Close every pooled connection. The store must not be used afterwards."""
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def purge(self, older_than: timedelta | None = None) -> Purged:
        """Delete what is older than the retention period ``older_than`` (default: the
        store's ``retention_days``), by the database's
        clock, in one transaction: cards resolved before it with their submissions, finished
        submissions and audit entries from before it, Home viewers not seen since, and finished
        outbox rows (at most :data:`OUTBOX_KEEP` old). Waiting cards, unfinished submissions
        and pending outbox rows are never deleted."""
        older_than = self.retention if older_than is None else older_than
        cutoff = self._ago(older_than.total_seconds())
        outbox_cutoff = self._ago(min(older_than, OUTBOX_KEEP).total_seconds())
        resolved = select(cards.c.pending_id).where(
            cards.c.state != CardState.PENDING.value, cards.c.resolved_at <= cutoff
        )
        finished = (OutboxStatus.DONE.value, OutboxStatus.FAILED.value)
        with self._write() as conn:
            # Two statements, each on its own index: one ``IN (...) OR ...`` reads the whole
            # table on PostgreSQL (a hashed subplan cannot drive an index).
            subs = conn.execute(
                delete(submissions).where(submissions.c.pending_id.in_(resolved))
            ).rowcount
            subs += conn.execute(
                delete(submissions).where(
                    submissions.c.finished_at.is_not(None), submissions.c.finished_at <= cutoff
                )
            ).rowcount
            for table in (card_messages, card_followups):  # a purged card's other messages
                conn.execute(delete(table).where(table.c.pending_id.in_(resolved)))
            gone = conn.execute(
                delete(cards).where(
                    cards.c.state != CardState.PENDING.value, cards.c.resolved_at <= cutoff
                )
            ).rowcount
            rows = conn.execute(
                delete(outbox).where(
                    outbox.c.status.in_(finished), outbox.c.finished_at <= outbox_cutoff
                )
            ).rowcount
            entries = conn.execute(delete(audit_log).where(audit_log.c.at <= cutoff)).rowcount
            viewers = conn.execute(
                delete(home_viewers).where(home_viewers.c.opened_at <= cutoff)
            ).rowcount
        return Purged(
            cards=gone, submissions=subs, outbox=rows, audit=entries, home_viewers=viewers
        )

    def stats(self) -> StoreStats:
        """A few indexed counts, in one read (cheap enough for every metrics scrape)."""
        pending = CardState.PENDING.value
        with self._read() as conn:
            count, oldest = conn.execute(
                select(func.count(), func.min(cards.c.created_at)).where(cards.c.state == pending)
            ).one()
            by_status = dict(
                conn.execute(
                    select(outbox.c.status, func.count())
                    .where(
                        outbox.c.status.in_((OutboxStatus.PENDING.value, OutboxStatus.FAILED.value))
                    )
                    .group_by(outbox.c.status)
                ).all()
            )
            unfinished = conn.scalar(
                select(func.count())
                .select_from(submissions)
                .where(submissions.c.finished_at.is_(None))
            )
            version = current_version(conn)
        return StoreStats(
            schema_version=version,
            pending_cards=int(count or 0),
            oldest_pending_at=oldest,
            outbox_pending=int(by_status.get(OutboxStatus.PENDING.value, 0)),
            outbox_failed=int(by_status.get(OutboxStatus.FAILED.value, 0)),
            unfinished_submissions=int(unfinished or 0),
        )

    def schema_version(self) -> int:
        with self._read() as conn:
            return current_version(conn)

    def ping(self) -> bool:
        """True when the database answers a trivial query (for /healthz)."""
        try:
            with self._read() as conn:
                conn.execute(text("SELECT 1"))
        except SQLAlchemyError:
            return False
        return True
