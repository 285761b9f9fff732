"""The periodic loop: a worker whose work only a change makes looks again after a round that
found nothing only once the store's count of changes moves, or every ``settled_s``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kandev_slack.ops.health import Health
from kandev_slack.usecases.followups.periodic import PeriodicLoop


@dataclass(eq=False)
class _Worker(PeriodicLoop):
    health: Health
    interval_s: float
    changes: object = None
    settled_s: float = 60.0
    found: list[int] = field(default_factory=list)  # what each round will find, in turn
    rounds: int = 0

    def work_once(self) -> int:
        self.rounds += 1
        return self.found.pop(0) if self.found else 0


@contextmanager
def _running(worker: _Worker) -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


def _until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.01)


def test_after_a_round_that_found_nothing_only_a_change_makes_another() -> None:
    count = [0]
    worker = _Worker(Health(), 0.01, changes=lambda: count[0], found=[2])
    with _running(worker):
        _until(lambda: worker.rounds == 2)  # found 2, then nothing: settled
        time.sleep(0.3)  # ~30 intervals
        assert worker.rounds == 2
        count[0] += 1  # a write changed rows
        _until(lambda: worker.rounds == 3)
        time.sleep(0.2)
        assert worker.rounds == 3


def test_a_settled_worker_still_looks_every_settled_s() -> None:
    worker = _Worker(Health(), 0.01, changes=lambda: 0, settled_s=0.2)
    with _running(worker):
        _until(lambda: worker.rounds == 1)
        started = time.monotonic()
        _until(lambda: worker.rounds == 3)
        assert time.monotonic() - started >= 0.35  # two more, 0.2 s apart


def test_without_a_count_of_changes_every_interval_has_a_round() -> None:
    worker = _Worker(Health(), 0.01)
    with _running(worker):
        _until(lambda: worker.rounds >= 10)


@dataclass(eq=False)
class _Timed(_Worker):
    due_s: float | None = None

    def next_due_s(self) -> float | None:
        return self.due_s


def test_a_settled_worker_looks_when_the_clock_makes_something_due() -> None:
    worker = _Timed(Health(), 0.01, changes=lambda: 0, due_s=0.25)
    with _running(worker):
        _until(lambda: worker.rounds == 1)
        started = time.monotonic()
        _until(lambda: worker.rounds == 2)
        assert 0.2 <= time.monotonic() - started < 2.0


def test_due_now_means_a_round_every_interval() -> None:
    worker = _Timed(Health(), 0.01, changes=lambda: 0, due_s=0.0)
    with _running(worker):
        _until(lambda: worker.rounds >= 10)
