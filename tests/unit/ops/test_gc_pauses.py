"""Collections of generation 1 and 2 are timed for /metrics (kandev_slack/ops/runtime.py)."""

from __future__ import annotations

import gc

from kandev_slack.ops.runtime import GcPauses


def test_a_collection_is_timed_from_its_start_to_its_stop() -> None:
    now = iter([10.0, 10.004, 20.0, 20.05])
    seen: list[tuple[int, float]] = []
    pauses = GcPauses(lambda g, s: seen.append((g, round(s, 6))), clock=lambda: next(now))

    pauses("start", {"generation": 1})
    pauses("stop", {"generation": 1, "collected": 3, "uncollectable": 0})
    pauses("start", {"generation": 0})  # the young generation: not timed, no clock read
    pauses("stop", {"generation": 0})
    pauses("start", {"generation": 2})
    pauses("stop", {"generation": 2})

    assert seen == [(1, 0.004), (2, 0.05)]


def test_installed_it_times_the_collector_s_own_collections_once() -> None:
    seen: list[tuple[int, float]] = []
    pauses = GcPauses(lambda g, s: seen.append((g, s)))
    pauses.install()
    pauses.install()  # once only
    try:
        gc.collect()
    finally:
        pauses.remove()
    gc.collect()  # removed: not seen

    assert [g for g, _ in seen] == [2]
    assert 0.0 <= seen[0][1] < 5.0
    assert pauses not in gc.callbacks
