"""An SQLite database file that is deleted or replaced while the bot runs is noticed.

``rm kandev-slack.db*`` (or a restore by ``mv`` of another file onto its path) leaves the
bot's open connections on the old, unlinked file: SQLite goes on writing into it, nothing
fails, and the next start opens another file that has forgotten everything. So the path's
device and inode are compared with the file opened at start (a ``stat``, cheap enough for
every write) and the file must stay writable: while either does not hold, the store refuses
every write (:class:`~kandev_slack.store.errors.DatabaseLost`), opens no new connection (which would
create an empty file in its place), and ``/healthz`` reports ``database``. A ``cp`` over the
open file keeps its inode and is not noticed: restore a backup with the bot stopped.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from kandev_slack.store.errors import DatabaseLost

log = logging.getLogger(__name__)


class SqliteFileGuard:
    """Watches the file of an SQLite database (see the module doc)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).absolute()
        st = os.stat(self.path)
        self._identity = (st.st_dev, st.st_ino)
        self._lock = threading.Lock()
        self._said: str | None = None

    def problem(self) -> str | None:
        """Why the file at the path is no longer the database this process opened (or cannot
        be written); None while it is."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            reason: str | None = f"the database file {self.path.name} was deleted"
        except OSError as exc:
            reason = f"the database file {self.path.name} cannot be read ({type(exc).__name__})"
        else:
            if (st.st_dev, st.st_ino) != self._identity:
                reason = f"the database file {self.path.name} was replaced by another file"
            elif not os.access(self.path, os.W_OK):
                reason = f"the database file {self.path.name} is not writable"
            else:
                reason = None
        self._note(reason)
        return reason

    def check(self) -> None:
        """Raise :class:`DatabaseLost` unless the file is still the one opened (and writable)."""
        reason = self.problem()
        if reason is not None:
            raise DatabaseLost(reason)

    def _note(self, reason: str | None) -> None:
        """Log each change once: lost (an error: writes are refused until a restart on a good
        file), and found again (the original file put back)."""
        with self._lock:
            if reason == self._said:
                return
            self._said = reason
        if reason is not None:
            log.error("%s (%s): every write is refused; restart on a good file", reason, self.path)
        else:
            log.warning("the database file %s is back: writes resume", self.path)
