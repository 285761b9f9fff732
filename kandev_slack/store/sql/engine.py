"""One SQLAlchemy Engine per store, tuned per backend.

SQLite: WAL and a busy timeout so several processes can share the file; the driver's own
transaction handling is replaced by explicit ``BEGIN`` (so DDL is transactional too), and write
transactions start with ``BEGIN IMMEDIATE`` so they queue on the busy timeout instead of failing
mid-way. PostgreSQL: psycopg 3 with pre-ping, so a restarted server is survived, and every
session started with :class:`SessionTimeouts`, so no session waits on a lock, runs a statement
or sits in an open transaction for ever (a frozen replica's transaction is ended by the server).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection
from sqlalchemy.pool import StaticPool

from kandev_slack.store.sql.checkpoints import AUTOCHECKPOINT_PAGES
from kandev_slack.store.sql.url import is_sqlite_memory, prepare_sqlite_file

SQLITE_BUSY_TIMEOUT_S = 30.0
#: Each SQLite connection's page cache (KiB; SQLite's default: 2,000). The process keeps up to
#: five connections, each of whose caches fills as reads touch pages (a listing among 1,000
#: waiting reads pages all over the cards' table) and stays full for as long as it lives:
#: 10 MB of the bot's memory at the default. The hot queries read a few index pages each,
#: which the operating system's file cache serves as fast.
SQLITE_CACHE_KIB = 512
PG_CONNECT_TIMEOUT_S = 10

#: Execution option that marks a connection whose transaction will write.
WRITE_OPTION = "kandev_store_write"


@dataclass(frozen=True)
class SessionTimeouts:
    """What every PostgreSQL session is started with (seconds): ``lock_timeout`` (waiting for
    a lock), ``statement_timeout`` (one statement) and ``idle_in_transaction_session_timeout``
    (an open transaction doing nothing: its session is ended, its locks released)."""

    lock_s: float = 5.0
    statement_s: float = 15.0
    idle_in_transaction_s: float = 30.0

    def options(self) -> str:
        """As libpq ``options`` (``-c name=value`` …), in milliseconds."""
        values = {
            "lock_timeout": self.lock_s,
            "statement_timeout": self.statement_s,
            "idle_in_transaction_session_timeout": self.idle_in_transaction_s,
        }
        return " ".join(f"-c {name}={round(s * 1000)}" for name, s in values.items())


def make_engine(url: URL, timeouts: SessionTimeouts | None = None) -> Engine:
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    connect_args: dict[str, Any] = {}
    if "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    # Ours first, the URL's own after (it may set a search_path, or override a timeout).
    given = url.query.get("options")
    given = " ".join(given) if isinstance(given, tuple) else given
    own = (timeouts or SessionTimeouts()).options()
    connect_args["options"] = f"{own} {given}" if given else own
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args)


def _sqlite_engine(url: URL) -> Engine:
    memory = is_sqlite_memory(url)
    kwargs: dict[str, Any] = {
        "connect_args": {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_S}
    }
    if memory:
        kwargs["poolclass"] = StaticPool  # one shared connection; the store serialises access
    else:
        prepare_sqlite_file(url)
    engine = create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _on_begin)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
            cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
            if not memory:
                _enable_wal(cursor)
                cursor.execute("PRAGMA synchronous = NORMAL")
                # Checkpointed in the background (checkpoints.py): a commit does it only
                # as a fallback, far later than SQLite's default.
                cursor.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        write = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _enable_wal(cursor: Any) -> None:
    """Switch the file to WAL (persistent, so usually a no-op check).

    Changing the journal mode needs an exclusive lock and SQLite does not always wait on the
    busy handler for it, so when several processes open a new file at once, retry here.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while True:
        if cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
            return
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
