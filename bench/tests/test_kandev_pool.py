"""The waiting pool: its memory guard (a shortage waits for an earlier scenario's agents to go,
then gives up with a clear error), and the bundles a scenario asks itself joining it."""

from __future__ import annotations

import pytest

from bench import kandev
from tests.kit.harness import KandevHarnessError


def test_a_shortage_waits_for_memory_to_come_back(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([500.0, 900.0, 4096.0])
    monkeypatch.setattr(kandev, "_available_mb", lambda: next(readings))
    slept: list[float] = []
    monkeypatch.setattr(kandev.time, "sleep", slept.append)
    kandev._enough_memory(100, wait_s=60.0)
    assert slept == [5.0, 5.0]


def test_a_shortage_that_lasts_stops_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kandev, "_available_mb", lambda: 500.0)
    clock = iter(float(n) for n in range(0, 1000, 5))
    monkeypatch.setattr(kandev.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(kandev.time, "sleep", lambda _s: None)
    with pytest.raises(KandevHarnessError, match="only 500 MB of memory available"):
        kandev._enough_memory(100, wait_s=20.0)


def _pool(slots: int, asked: int) -> kandev.WaitingPool:
    pool = kandev.WaitingPool(kandev.DirectBundles(None), ["ws"])  # type: ignore[arg-type]
    pool.slots = [
        kandev.Slot(f"t{n}", f"s{n}", "ws", f"Bench bundle {n + 1}") for n in range(slots)
    ]
    pool.asked = [kandev.Asked(f"p{n}", f"t{n}", "ws", 0.0) for n in range(asked)]
    return pool


def test_bundles_a_scenario_asked_itself_join_the_pool_in_order() -> None:
    pool = _pool(slots=5, asked=2)
    pool.adopt([kandev.Asked("p2", "t2", "ws", 0.0), kandev.Asked("p3", "t3", "ws", 0.0)])
    assert [a.pending_id for a in pool.ask(3)] == ["p0", "p1", "p2", "p3"]
    assert pool.slot_of("p3").task_id == "t3"
    with pytest.raises(ValueError, match="next slots"):
        pool.adopt([kandev.Asked("p9", "t0", "ws", 0.0)])


def test_slots_a_failed_scenario_may_have_asked_are_never_asked_again() -> None:
    pool = _pool(slots=5, asked=2)
    pool.drop(pool.slots[2:4])
    assert [s.task_id for s in pool.slots] == ["t0", "t1", "t4"]
    pool.drop(pool.slots[:1])  # an asked one stays: it is waiting
    assert [s.task_id for s in pool.slots] == ["t0", "t1", "t4"]
