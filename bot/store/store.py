"""The durable store: one object over one Engine, safe to share between threads."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from bot.store.audit import AuditMixin
from bot.store.base import Clock
from bot.store.cards import CardsMixin
from bot.store.engine import make_engine
from bot.store.home import HomeViewersMixin
from bot.store.migrations import current_version, migrate
from bot.store.outbox import OutboxMixin
from bot.store.submissions import SubmissionsMixin
from bot.store.url import DEFAULT_DATABASE_URL, display_url, is_sqlite_memory, normalize_url


class Store(CardsMixin, SubmissionsMixin, AuditMixin, OutboxMixin, HomeViewersMixin):
    """Cards, submissions, the audit log, the outbox and the Home tab's recent viewers, on
    SQLite or PostgreSQL.

    Opening connects, creates or upgrades the schema (see migrations.py) and fails early with
    the database's own error when it cannot. Every timestamp the store writes and every lease
    it compares comes from the database's clock, never this process's: replicas on machines
    whose clocks differ share leases safely. ``clock`` (timezone-aware UTC) stands in for the
    database's clock in tests.
    """

    def __init__(
        self, url: str | URL = DEFAULT_DATABASE_URL, *, clock: Clock | None = None
    ) -> None:
        self.url = normalize_url(url)
        engine = make_engine(self.url)
        lock: AbstractContextManager[object] = (
            threading.RLock() if is_sqlite_memory(self.url) else nullcontext()
        )
        try:
            migrate(engine)
        except BaseException:
            engine.dispose()
            raise
        super().__init__(engine, clock, lock)

    @classmethod
    def open(cls, url: str | URL = DEFAULT_DATABASE_URL, *, clock: Clock | None = None) -> Store:
        return cls(url, clock=clock)

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

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.url.get_backend_name()

    @property
    def display_url(self) -> str:
        """The URL with its password hidden, for logs and health reports."""
        return display_url(self.url)

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
