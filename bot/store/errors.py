"""The one exception the store raises for problems of its own (bad URL, schema too new), and
which of the database driver's errors mean the database cannot be reached right now."""

from __future__ import annotations

from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

_UNAVAILABLE = (OperationalError, InterfaceError, PoolTimeoutError)


class StoreError(Exception):
    """A configuration or schema problem of the durable store (never carries a password)."""


def is_unavailable(exc: BaseException) -> bool:
    """The database did not answer (unreachable, connection lost, pool exhausted): wait for it,
    rather than count the failure against what was being written."""
    return isinstance(exc, _UNAVAILABLE)
