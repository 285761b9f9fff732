"""The SQLite file's write-ahead log is checkpointed in the background, not by the commit
that fills it (kandev_slack/store/sql/checkpoints.py): a commit that checkpoints writes and
syncs the database file while every writer queued behind it (an ack's) waits."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from kandev_slack.store import Database
from kandev_slack.store.sql.checkpoints import AUTOCHECKPOINT_PAGES, Checkpoints
from tests.kit.factories import record_card


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    with Database(f"sqlite:///{tmp_path / 'kandev-slack.db'}") as opened:
        yield opened


def test_a_commit_leaves_the_log_to_the_background(db: Database) -> None:
    """Every connection's automatic checkpoint is the far fallback, not SQLite's 1,000 pages
    (failed before: 1,000)."""
    with db.sql.read() as conn:
        assert conn.execute(text("PRAGMA wal_autocheckpoint")).scalar() == AUTOCHECKPOINT_PAGES
    assert db.checkpoints is not None


def test_the_background_checkpoint_copies_the_log_after_writes_only(db: Database) -> None:
    checkpoints = db.checkpoints
    assert isinstance(checkpoints, Checkpoints)
    for n in range(30):
        record_card(db, f"p{n}")

    done = checkpoints.run_once()

    assert done is not None and not done.busy
    assert done.log_pages > 0 and done.copied_pages == done.log_pages
    assert checkpoints.run_once() is None  # nothing written since: nothing done
    record_card(db, "one-more")
    again = checkpoints.run_once()
    assert again is not None and again.copied_pages == again.log_pages


def test_the_worker_checkpoints_until_stopped(db: Database) -> None:
    checkpoints = Checkpoints(db.sql.engine, db.sql.writes, interval_s=0.02)
    done: list[object] = []
    real = checkpoints.checkpoint

    def counted():
        result = real()
        done.append(result)
        return result

    checkpoints.checkpoint = counted  # type: ignore[method-assign]
    stop = threading.Event()
    worker = threading.Thread(target=checkpoints.run, args=(stop,))
    worker.start()
    try:
        record_card(db, "p1")
        deadline = time.monotonic() + 5
        while not done and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        worker.join(5)
    assert done and not worker.is_alive()


def test_an_in_memory_store_has_no_log_to_checkpoint() -> None:
    with Database("sqlite://") as memory:
        assert memory.checkpoints is None


def test_the_bot_on_an_sqlite_file_runs_the_checkpoints_worker(app) -> None:
    """The running bot (kandev_slack.app.build) checkpoints its log in a worker of its own."""
    assert app.bot is not None
    names = [worker.name for worker in app.bot.workers]
    assert "checkpoints" in names
    assert app.bot.store.checkpoints is not None
