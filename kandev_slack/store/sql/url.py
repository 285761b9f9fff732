"""DATABASE_URL handling: the one parser and normaliser of the URL (the settings validate with
it, the store opens what it returns), and SQLite files created as 0600."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from kandev_slack.store.errors import StoreError

log = logging.getLogger(__name__)

DEFAULT_DATABASE_URL = "sqlite:///kandev-slack.db"

_POSTGRES_ALIASES = {"postgres", "postgresql", "postgresql+psycopg"}
_SQLITE_ALIASES = {"sqlite", "sqlite+pysqlite"}
_SUPPORTED = "sqlite:///path/to/file.db or postgresql://user@host:5432/dbname"


def normalize_url(url: str | URL) -> URL:
    """Parse ``url``; ``postgres://`` and ``postgresql://`` become ``postgresql+psycopg://``.

    Only SQLite (``sqlite://``, ``sqlite+pysqlite://``) and PostgreSQL via psycopg 3 are
    supported; anything else is a :class:`StoreError` whose message never shows the URL.
    """
    if isinstance(url, str):
        try:
            parsed = make_url(url.strip())
        except ArgumentError:
            raise StoreError(f"DATABASE_URL is not a database URL; use {_SUPPORTED}") from None
    else:
        parsed = url
    if parsed.drivername in _POSTGRES_ALIASES:
        return parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername in _SQLITE_ALIASES:
        return parsed
    raise StoreError(
        f"DATABASE_URL uses '{parsed.drivername}'; kandev-slack supports only {_SUPPORTED}"
    )


def is_sqlite_memory(url: URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


def prepare_sqlite_file(url: URL) -> None:
    """Create the database file readable and writable by its owner only (0600), if it is new.

    SQLite itself would create it with the process umask (usually world-readable); it creates
    its ``-wal``/``-shm`` companions with the main file's mode, so they stay private too.
    An existing file is left as it is, with a warning when others can read it.
    """
    if is_sqlite_memory(url) or url.database is None:
        return
    path = Path(url.database)
    if not path.parent.exists():
        raise StoreError(
            f"DATABASE_URL points into {path.parent}, which does not exist; create the "
            "directory or choose another path"
        )
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            log.warning(
                "database file %s has mode %o; others can read it (chmod 600 %s)", path, mode, path
            )
        return
    try:
        os.fchmod(fd, 0o600)  # exactly 0600 whatever the umask
    finally:
        os.close(fd)
