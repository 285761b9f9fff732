"""The database: opens (and migrates) one Engine and holds one repository per aggregate.

Use-cases receive only the repositories they use (``db.cards``, ``db.outbox`` …), never the
whole :class:`Database`; only the composition root (kandev_slack/app.py) and the commands hold it.
"""

from __future__ import annotations

import threading
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any

from sqlalchemy import Engine, event, func, or_, select, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from kandev_slack.ops.vault import Vault
from kandev_slack.store.audit import AuditRepository
from kandev_slack.store.base import Clock, Sql
from kandev_slack.store.cards.cards import CardsRepository
from kandev_slack.store.cards.claims import ClaimsRepository
from kandev_slack.store.cards.followups import FollowupsRepository
from kandev_slack.store.cards.snoozes import SnoozesRepository
from kandev_slack.store.cards.thread_replies import ThreadRepliesRepository
from kandev_slack.store.kinds import unknown_here, waiting_any_kind
from kandev_slack.store.migrations import SCHEMA_VERSION, current_version, migrate
from kandev_slack.store.people.digests import DigestsRepository
from kandev_slack.store.people.home import HomeViewersRepository
from kandev_slack.store.people.links import LinksRepository
from kandev_slack.store.queues.outbox import OutboxRepository
from kandev_slack.store.queues.submissions import SubmissionsRepository
from kandev_slack.store.records import OutboxStatus
from kandev_slack.store.retention import DEFAULT_RETENTION_DAYS, Retention
from kandev_slack.store.schema import cards, outbox, submissions
from kandev_slack.store.sql.checkpoints import Checkpoints
from kandev_slack.store.sql.engine import SessionTimeouts, make_engine
from kandev_slack.store.sql.sqlite_file import SqliteFileGuard
from kandev_slack.store.sql.url import DEFAULT_DATABASE_URL, is_sqlite_memory, normalize_url
from kandev_slack.store.sql.write_queue import WriteQueue

#: How often /healthz reads again whether a newer release wrote here (see ``newer_than_this``).
NEWER_CHECK_S = 30.0


@dataclass(frozen=True)
class StoreStats:
    """What the store holds that an operator watches (metrics, ``kandev-slack db status``)."""

    schema_version: int
    pending_cards: int
    oldest_pending_at: datetime | None  # when the oldest waiting card was claimed
    outbox_pending: int  # posts and edits not done yet
    outbox_failed: int  # given up for good (kept for a week)
    unfinished_submissions: int  # answers on their way to Kandev (or left by a crash)


class Database:
    """Cards, submissions, the audit log, the outbox and the Home tab's recent viewers, on
    SQLite or PostgreSQL, as one repository per aggregate sharing one :class:`Sql` (engine,
    clock, write queue):

    - ``cards``: cards and their other messages (escalation and DM cards);
    - ``submissions``: answers on their way to Kandev, leased;
    - ``outbox``: Slack writes kept until done, and the per-channel posting slots;
    - ``followups``: reminder / escalation / DM-card steps, and subscriptions;
    - ``audit_log``: the append-only audit log;
    - ``viewers``: who opened the App Home tab recently;
    - ``thread_replies``: replies in a card's thread offered as an answer (Send / Cancel);
    - ``claims``: who is on a waiting card ("I'm on it") and until when;
    - ``snoozes``: who hid which waiting question from their own views until when;
    - ``digests``: each person's digest time, and the digests sent (one per target and date);
    - ``links``: each person's own Kandev account and token (sealed by ``vault``, the keys of
      KANDEV_SLACK_SECRET_KEY; None: no token can be stored or read), and their parked click;
    - ``retention``: deletes what is older than ``retention_days`` (``purge``).

    Opening connects, creates or upgrades the schema (see migrations.py) and fails early with
    the database's own error when it cannot. Every timestamp the store writes and every lease
    it compares comes from the database's clock, never this process's: replicas on machines
    whose clocks differ share leases safely. ``clock`` (timezone-aware UTC) stands in for the
    database's clock in tests. ``timeouts``: what every PostgreSQL session is started with
    (lock, statement and idle-in-transaction timeouts; see engine.py).
    """

    def __init__(
        self,
        url: str | URL = DEFAULT_DATABASE_URL,
        *,
        clock: Clock | None = None,
        retention_days: int = DEFAULT_RETENTION_DAYS,
        upgrade: bool = True,
        timeouts: SessionTimeouts | None = None,
        vault: Vault | None = None,
    ) -> None:
        self.url = normalize_url(url)
        engine = make_engine(self.url, timeouts)
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
            self.file = _guard_file(engine) if sqlite_file else None
        except BaseException:
            engine.dispose()
            raise
        before_write = self.file.check if self.file is not None else None
        self.sql = Sql(engine, clock, lock, write_lock, before_write)
        #: The SQLite file's background checkpoints (None: PostgreSQL, or in memory).
        self.checkpoints = Checkpoints(engine, self.sql.writes) if sqlite_file else None
        self.cards = CardsRepository(self.sql)
        self.submissions = SubmissionsRepository(self.sql)
        self.outbox = OutboxRepository(self.sql)
        self.followups = FollowupsRepository(self.sql, self.outbox)
        self.audit_log = AuditRepository(self.sql)
        self.viewers = HomeViewersRepository(self.sql)
        self.thread_replies = ThreadRepliesRepository(self.sql)
        self.claims = ClaimsRepository(self.sql, self.outbox)
        self.snoozes = SnoozesRepository(self.sql, self.outbox)
        self.digests = DigestsRepository(self.sql, self.outbox)
        self.links = LinksRepository(self.sql, vault)
        self.retention = Retention(self.sql, timedelta(days=retention_days))
        self._newer: str | None = None
        self._newer_at: float | None = None

    def close(self) -> None:
        """Close every pooled connection. The database must not be used afterwards."""
        self.sql.engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def stats(self) -> StoreStats:
        """A few indexed counts, in one read (cheap enough for every metrics scrape)."""
        with self.sql.read() as conn:
            count, oldest = conn.execute(
                select(func.count(), func.min(cards.c.created_at)).where(waiting_any_kind())
            ).one()
            by_status: dict[str | None, int] = dict(
                conn.execute(
                    select(outbox.c.status, func.count())
                    .where(
                        or_(
                            outbox.c.status.in_(
                                (OutboxStatus.PENDING.value, OutboxStatus.FAILED.value)
                            ),
                            outbox.c.status.is_(None),  # pending (kandev_slack/store/kinds.py)
                        )
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
            outbox_pending=int(by_status.get(OutboxStatus.PENDING.value, 0))
            + int(by_status.get(None, 0)),
            outbox_failed=int(by_status.get(OutboxStatus.FAILED.value, 0)),
            unfinished_submissions=int(unfinished or 0),
        )

    def schema_version(self) -> int:
        with self.sql.read() as conn:
            return current_version(conn)

    def problem(self) -> str | None:
        """What /healthz says of the database: its SQLite file lost, or no answer (None: ok)."""
        lost = self.file.problem() if self.file is not None else None
        if lost is not None:
            return lost
        return None if self.ping() else "does not answer"

    def newer_than_this(self) -> str | None:
        """What /healthz says when this release meets what a newer one wrote (None: nothing):
        a schema newer than its own, waiting cards of kinds it does not know. Both are left
        alone (kandev_slack/store/kinds.py). Read at most every :data:`NEWER_CHECK_S`
        seconds."""
        now = time.monotonic()
        if self._newer_at is None or now - self._newer_at >= NEWER_CHECK_S:
            try:
                with self.sql.read() as conn:
                    version = current_version(conn)
                    unknown = unknown_here(conn)
            except Exception:  # the database away: its own check ("database") says so
                return self._newer
            reasons = [unknown] if unknown else []
            if version > SCHEMA_VERSION:
                reasons.insert(
                    0,
                    f"the database's schema version {version} is newer than this release's "
                    f"({SCHEMA_VERSION}): a newer release runs beside it",
                )
            self._newer, self._newer_at = "; ".join(reasons) or None, now
        return self._newer

    def ping(self) -> bool:
        """True when the database answers a trivial query (for /healthz)."""
        try:
            with self.sql.read() as conn:
                conn.execute(text("SELECT 1"))
        except SQLAlchemyError:
            return False
        return True


def _guard_file(engine: Engine) -> SqliteFileGuard:
    """Watch the engine's SQLite file; a new connection is opened only while it is still the
    file opened now (else SQLite would create an empty one in its place)."""
    assert engine.url.database is not None
    guard = SqliteFileGuard(engine.url.database)

    @event.listens_for(engine, "do_connect")
    def _before_connect(*_args: Any) -> None:
        guard.check()

    return guard
