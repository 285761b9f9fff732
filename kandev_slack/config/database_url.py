"""DATABASE_URL: the one parser and normaliser of the URL (the settings validate with it, the
store opens what it returns)."""

from __future__ import annotations

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

DEFAULT_DATABASE_URL = "sqlite:///kandev-slack.db"

_POSTGRES_ALIASES = {"postgres", "postgresql", "postgresql+psycopg"}
_SQLITE_ALIASES = {"sqlite", "sqlite+pysqlite"}
_SUPPORTED = "sqlite:///path/to/file.db or postgresql://user@host:5432/dbname"


class DatabaseUrlError(ValueError):
    """DATABASE_URL names no database kandev-slack supports (the message never shows it)."""


def normalize_url(url: str | URL) -> URL:
    """Parse ``url``; ``postgres://`` and ``postgresql://`` become ``postgresql+psycopg://``.

    Only SQLite (``sqlite://``, ``sqlite+pysqlite://``) and PostgreSQL via psycopg 3 are
    supported; anything else is a :class:`DatabaseUrlError` whose message never shows the URL.
    """
    if isinstance(url, str):
        try:
            parsed = make_url(url.strip())
        except ArgumentError:
            raise DatabaseUrlError(
                f"DATABASE_URL is not a database URL; use {_SUPPORTED}"
            ) from None
    else:
        parsed = url
    if parsed.drivername in _POSTGRES_ALIASES:
        return parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername in _SQLITE_ALIASES:
        return parsed
    raise DatabaseUrlError(
        f"DATABASE_URL uses '{parsed.drivername}'; kandev-slack supports only {_SUPPORTED}"
    )


def is_sqlite_memory(url: URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")
