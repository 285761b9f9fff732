"""What every part of the store shares: the engine, the clock, and transaction helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta

from sqlalchemy import Engine, Insert, Table
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from bot.store.engine import WRITE_OPTION

Clock = Callable[[], datetime]


class StoreBase:
    def __init__(self, engine: Engine, clock: Clock, lock: AbstractContextManager[object]) -> None:
        self._engine = engine
        self._clock = clock
        self._lock = lock  # a real lock only for in-memory SQLite (one shared connection)

    def _now(self) -> datetime:
        return self._clock()

    def _ago(self, seconds: float) -> datetime:
        return self._now() - timedelta(seconds=seconds)

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """A transaction that will write (``BEGIN IMMEDIATE`` on SQLite); commits on success."""
        with self._lock, self._engine.connect() as conn:
            conn.execution_options(**{WRITE_OPTION: True})
            with conn.begin():
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._lock, self._engine.connect() as conn, conn.begin():
            yield conn


def insert_unless_exists(conn: Connection, table: Table, conflict: str) -> Insert:
    """``INSERT ... ON CONFLICT (conflict) DO NOTHING`` for the connection's backend."""
    make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    return make(table).on_conflict_do_nothing(index_elements=[conflict])
