"""The SQLite file's write-ahead log, copied into the database by a background thread rather
than by whichever commit happens to fill it.

In WAL mode SQLite checkpoints the log itself, by default in the commit that takes it past
1,000 pages: that commit writes the pages into the database file and syncs it (on this
project's 2-CPU VM, tens of milliseconds) before it returns. Its writer still holds the
process's write queue meanwhile (write_queue.py), so every writer queued behind it waits too:
under a crowd, the writes that clicks' acks wait for.

Here the automatic checkpoint is only a fallback, far out (:data:`AUTOCHECKPOINT_PAGES`,
set on every connection, engine.py), and :class:`Checkpoints` runs a ``PASSIVE`` checkpoint
every :data:`INTERVAL_S` after this process wrote: it copies what no reader still needs, and
waits for no reader or writer, so no commit waits for it. Several processes sharing the file
each run theirs; one that finds another checkpointing skips its turn.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine

log = logging.getLogger(__name__)

#: Pages of log after which a commit still checkpoints by itself (SQLite's default: 1,000;
#: ~40 MB of 4 KiB pages): only when the background checkpoints cannot keep up, or do not run.
AUTOCHECKPOINT_PAGES = 10_000
#: How often the log is checkpointed while this process writes.
INTERVAL_S = 1.0


@dataclass(frozen=True)
class Checkpoint:
    """What one ``PRAGMA wal_checkpoint(PASSIVE)`` reported."""

    busy: bool  # another connection was checkpointing (or it could not start)
    log_pages: int  # pages in the log
    copied_pages: int  # of which are now in the database file


class Checkpoints:
    """Checkpoints ``engine``'s SQLite file in the background (see the module's doc).
    ``writes``: how many write transactions of this process changed rows so far (a round after
    none is skipped)."""

    def __init__(
        self, engine: Engine, writes: Callable[[], int], interval_s: float = INTERVAL_S
    ) -> None:
        self.engine = engine
        self.writes = writes
        self.interval_s = interval_s
        self._checkpointed_at: int | None = None

    def checkpoint(self) -> Checkpoint:
        """One passive checkpoint, outside any transaction (a checkpoint needs none, and one
        begun by the pool's connection would hold a read snapshot it cannot copy past)."""
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            try:
                cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
                row = cursor.fetchone()
                if row is None:  # SQLite always answers one row; a driver that did not
                    raise RuntimeError("PRAGMA wal_checkpoint answered nothing")
                busy, log_pages, copied = row
            finally:
                cursor.close()
        finally:
            raw.close()
        return Checkpoint(busy=bool(busy), log_pages=int(log_pages), copied_pages=int(copied))

    def run_once(self) -> Checkpoint | None:
        """Checkpoint when this process wrote since the last one (None: nothing written)."""
        writes = self.writes()
        if writes == self._checkpointed_at:
            return None
        done = self.checkpoint()
        if not done.busy:
            self._checkpointed_at = writes
        return done

    def run(self, stop: threading.Event) -> None:
        """The checkpointing worker, until ``stop``."""
        while not stop.wait(self.interval_s):
            try:
                self.run_once()
            except Exception:  # the file away, the disk full: the fallback still checkpoints
                log.warning("could not checkpoint the SQLite log; will retry", exc_info=True)
