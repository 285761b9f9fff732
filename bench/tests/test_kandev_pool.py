"""The waiting pool's memory guard: a shortage waits for an earlier scenario's agents to go,
then gives up with a clear error."""

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
