"""The exceptions the store raises for problems of its own (bad URL, schema too new; its SQLite
file lost), and which of the database driver's errors mean the database cannot be reached
right now."""

from __future__ import annotations

import sqlite3

from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

_UNAVAILABLE = (OperationalError, InterfaceError, PoolTimeoutError)


class StoreError(Exception):
    """A configuration or schema problem of the durable store (never carries a password)."""


class DatabaseLost(OperationalError):
    """The SQLite file this process opened was deleted, replaced or made read-only (see
    sqlite_file.py): nothing is written. An ``OperationalError`` (:func:`is_unavailable`), so
    every caller that waits out a database that does not answer (the outbox, the loops) waits
    this out the same way."""

    #: Logged once, when the file was found lost (kandev_slack/ops/logs.py ``log_failure``).
    said = True

    def __init__(self, reason: str) -> None:
        super().__init__(None, None, sqlite3.OperationalError(reason))
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def is_unavailable(exc: BaseException) -> bool:
    """The database did not answer (unreachable, connection lost, pool exhausted, its SQLite
    file lost): wait for it, rather than count the failure against what was being written."""
    return isinstance(exc, _UNAVAILABLE)
