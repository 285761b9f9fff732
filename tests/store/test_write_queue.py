"""A crowd's writes on an SQLite file: one process's writers queue on a lock of its own, never
on SQLite's busy handler (which sleeps up to 100 ms between two looks at the lock)."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest

from bot.store import Store, engine
from bot.store.records import SubmissionContent

WRITERS = 32
WRITES_EACH = 5


def test_concurrent_writers_of_one_process_never_meet_the_busy_handler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No busy timeout at all: a writer that found the file locked would fail at once.
    monkeypatch.setattr(engine, "SQLITE_BUSY_TIMEOUT_S", 0.0)
    store = Store(f"sqlite:///{tmp_path / 'crowd.db'}")
    start = threading.Barrier(WRITERS)
    failures: list[BaseException] = []
    keys: list[str] = []
    lock = threading.Lock()

    def person(n: int) -> None:
        start.wait()
        for _ in range(WRITES_EACH):
            key = uuid.uuid4().hex
            try:
                began = store.begin_submission(
                    f"p{n}", key, f"U{n}", SubmissionContent(action="answer")
                )
                store.finish_submission(key, "won")
            except BaseException as exc:  # noqa: BLE001 - collected and reported below
                with lock:
                    failures.append(exc)
                return
            assert began
            with lock:
                keys.append(key)

    threads = [threading.Thread(target=person, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    try:
        assert failures == [], f"{len(failures)} writers failed, e.g. {failures[0]!r}"
        assert len(keys) == WRITERS * WRITES_EACH
        assert all(store.get_submission(k).finished_at is not None for k in keys)
    finally:
        store.close()
