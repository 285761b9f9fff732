"""What every part of the store shares: the engine, the clock, and transaction helpers."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Engine, Insert, Table, event, func, literal, type_coerce
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from kandev_slack.store.sql.engine import WRITE_OPTION
from kandev_slack.store.sql.types import UTCDateTime

Clock = Callable[[], datetime]
_Statement = TypeVar("_Statement")

#: ``Connection.info`` key: a statement of the open write transaction changed rows.
CHANGED = "kandev_store_changed"
_WRITING_VERBS = ("INSERT", "UPDATE", "DELETE")


def _note_change(
    conn: Connection,
    cursor: Any,
    statement: str,
    _parameters: Any,
    _context: Any,
    _executemany: bool,
) -> None:
    """After each statement: mark the transaction as changing rows if this one may have (a
    ``RETURNING`` statement's count is not known before its rows are read: it counts)."""
    if not statement.lstrip()[:6].upper().startswith(_WRITING_VERBS):
        return
    if cursor.rowcount != 0 or "RETURNING" in statement:
        conn.info[CHANGED] = True


#: SQLite's own clock, formatted like the stored timestamps (so text order is time order).
_SQLITE_NOW_FORMAT = "%Y-%m-%d %H:%M:%f"


class Sql:
    """The one database object every repository shares: the engine, the clock, the locks
    around transactions, and the database's now as SQL.

    ``clock`` None: every timestamp the store writes and every lease or expiry it compares
    is the DATABASE's now, computed inside the SQL statement, so replicas whose own clocks
    differ still agree on who holds what. A ``clock`` replaces the database's clock (tests).
    """

    def __init__(
        self,
        engine: Engine,
        clock: Clock | None,
        lock: AbstractContextManager[object],
        write_lock: AbstractContextManager[object] | None = None,
        before_write: Callable[[], None] | None = None,
    ) -> None:
        self.engine = engine
        self.clock = clock
        if not event.contains(engine, "after_cursor_execute", _note_change):
            event.listen(engine, "after_cursor_execute", _note_change)
        self._lock = lock  # a real lock only for in-memory SQLite (one shared connection)
        #: Held around every write transaction (a real lock only for an SQLite file, whose
        #: writers are one at a time anyway; see Database).
        self._write_lock = write_lock or nullcontext()
        #: Raises instead of letting a write begin (an SQLite file deleted or replaced).
        self._before_write = before_write
        #: The transaction of this thread's open :meth:`unit`, if any (per thread, never
        #: carried to another: a connection is used by one thread at a time).
        self._unit = threading.local()
        #: Write transactions of this process that changed rows, so far (see :meth:`writes`).
        self._writes = 0
        self._count_writes = itertools.count(1)
        #: Statements built once (see :meth:`prepared`), by their key.
        self._prepared: dict[Hashable, Any] = {}

    def _open_unit(self) -> Connection | None:
        conn: Connection | None = getattr(self._unit, "conn", None)
        return conn

    @contextmanager
    def unit(self) -> Iterator[None]:
        """One transaction for every store call this thread makes inside the block, on any
        repository sharing this :class:`Sql`: committed when the block ends, rolled back
        (all of it) when it raises — e.g. a card's state change and the outbox row of its
        edit, both there or neither. Nested, the inner block is part of the outer one."""
        if self._open_unit() is not None:
            yield
            return
        with self.write() as conn:
            self._unit.conn = conn
            try:
                yield
            finally:
                self._unit.conn = None

    def prepared(self, key: Hashable, build: Callable[[], _Statement]) -> _Statement:
        """The statement ``build`` makes, built once per ``key`` and reused. Its values are
        bind parameters, given when it is executed; ``key`` names everything else it depends on
        (an ``ago``'s seconds, a state it compares with): it comes from a small set, the
        constants of the callers, since each statement is kept for the process's life.

        A hot query's statement built anew for each call costs more than the database's work
        on it: SQLAlchemy walks a new statement to find its compiled form in its cache, a walk
        it does once for a statement object it has seen. With a ``clock`` (tests), the
        database's now is that moment, a literal: built each time."""
        if self.clock is not None:
            return build()
        statement = self._prepared.get(key)
        if statement is None:
            statement = self._prepared.setdefault(key, build())
        return statement

    def now(self) -> ColumnElement[Any]:
        """Now, as a SQL expression evaluated by the database."""
        return self.at(0.0)

    def ago(self, seconds: float) -> ColumnElement[Any]:
        return self.at(-seconds)

    def at(self, seconds: float) -> ColumnElement[Any]:
        """The database's now plus ``seconds`` (negative: in the past), as a SQL expression."""
        if self.clock is not None:
            return literal(self.clock() + timedelta(seconds=seconds), UTCDateTime())
        if self.engine.dialect.name == "postgresql":
            now: ColumnElement[Any] = func.now()
            if seconds:
                now = now + timedelta(seconds=seconds)
            return type_coerce(now, UTCDateTime())
        modifiers = [f"{seconds:+.6f} seconds"] if seconds else []
        return type_coerce(func.strftime(_SQLITE_NOW_FORMAT, "now", *modifiers), UTCDateTime())

    @contextmanager
    def write(self, within_s: float | None = None) -> Iterator[Connection]:
        """A transaction that will write (``BEGIN IMMEDIATE`` on SQLite); commits on success.
        ``within_s`` (PostgreSQL): its lock waits and statements are cut at that many seconds
        (e.g. the hand-over, which must fit its budget whatever holds a lock). Inside a
        :meth:`unit`: that unit's transaction."""
        open_unit = self._open_unit()
        if open_unit is not None:
            yield open_unit
            return
        if self._before_write is not None:
            self._before_write()
        with self._write_lock, self._lock, self.engine.connect() as conn:
            conn.execution_options(**{WRITE_OPTION: True})
            with conn.begin():
                if within_s is not None and conn.dialect.name == "postgresql":
                    ms = max(int(within_s * 1000), 1)
                    conn.exec_driver_sql(f"SET LOCAL lock_timeout = {ms}")
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {ms}")
                conn.info.pop(CHANGED, None)
                yield conn
                changed = conn.info.pop(CHANGED, False)
            if changed:  # committed
                self._writes = next(self._count_writes)

    def writes(self) -> int:
        """How many write transactions of this process have changed rows so far: a worker
        that found nothing to do need not look again until this moves (or time makes something
        due; another replica's writes do not count)."""
        return self._writes

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only transaction (inside a :meth:`unit`: that unit's, which sees its writes)."""
        open_unit = self._open_unit()
        if open_unit is not None:
            yield open_unit
            return
        with self._lock, self.engine.connect() as conn, conn.begin():
            yield conn


class Repository:
    """One aggregate's queries over the shared :class:`Sql` (one public method of its own:
    :meth:`atomic`, the unit of work spanning every repository of the database)."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    @property
    def _engine(self) -> Engine:
        return self._sql.engine

    @property
    def _clock(self) -> Clock | None:
        return self._sql.clock

    def _now(self) -> ColumnElement[Any]:
        return self._sql.now()

    def _ago(self, seconds: float) -> ColumnElement[Any]:
        return self._sql.ago(seconds)

    def _at(self, seconds: float) -> ColumnElement[Any]:
        return self._sql.at(seconds)

    def _prepared(self, key: Hashable, build: Callable[[], _Statement]) -> _Statement:
        """See :meth:`Sql.prepared`."""
        return self._sql.prepared(key, build)

    def atomic(self) -> AbstractContextManager[None]:
        """The unit of work: every call on this database's repositories inside the block, by
        this thread, is one transaction (see :meth:`Sql.unit`)."""
        return self._sql.unit()

    def _write(self, within_s: float | None = None) -> AbstractContextManager[Connection]:
        return self._sql.write(within_s)

    def _read(self) -> AbstractContextManager[Connection]:
        return self._sql.read()


def insert_unless_exists(conn: Connection, table: Table, conflict: str) -> Insert:
    """``INSERT ... ON CONFLICT (conflict) DO NOTHING`` for the connection's backend."""
    make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    return make(table).on_conflict_do_nothing(index_elements=[conflict])
