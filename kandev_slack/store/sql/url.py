"""SQLite files created as 0600 (the URL itself is parsed by
kandev_slack/config/database_url.py, re-exported here for the store)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from sqlalchemy.engine import URL

from kandev_slack.config.database_url import (
    DEFAULT_DATABASE_URL,
    DatabaseUrlError,
    is_sqlite_memory,
    normalize_url,
)
from kandev_slack.store.errors import StoreError

__all__ = [
    "DEFAULT_DATABASE_URL",
    "DatabaseUrlError",
    "is_sqlite_memory",
    "normalize_url",
    "prepare_sqlite_file",
]

log = logging.getLogger(__name__)


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
