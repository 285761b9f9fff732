"""Turns: heavy computations one at a time, each waiting a bounded time for its turn."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kandev_slack.ops import metrics
from kandev_slack.ops.urgency import Turns


def _yield_count(work: str) -> float:
    value = metrics.REGISTRY.get_sample_value(
        "kandev_slack_followup_yield_seconds_count", {"work": work}
    )
    return value or 0.0


def test_computations_take_turns_one_at_a_time() -> None:
    turns = Turns(5.0, "listing")
    running, most = 0, 0
    lock = threading.Lock()

    def compute(_: int) -> None:
        nonlocal running, most
        with turns.turn():
            with lock:
                running += 1
                most = max(most, running)
            time.sleep(0.01)
            with lock:
                running -= 1

    before = _yield_count("listing")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(compute, range(16)))

    assert most == 1
    assert _yield_count("listing") - before == 16


def test_a_computation_held_up_holds_the_next_up_for_the_bound_only() -> None:
    turns = Turns(0.05, "listing")
    held, release = threading.Event(), threading.Event()

    def stuck() -> None:
        with turns.turn():
            held.set()
            release.wait(5.0)

    thread = threading.Thread(target=stuck)
    thread.start()
    try:
        assert held.wait(5.0)
        began = time.monotonic()
        with turns.turn():
            waited = time.monotonic() - began
        assert 0.04 <= waited < 2.0  # it went without its turn, past the bound
        # The turn is still the stuck one's: the next waits again, then goes.
        with turns.turn():
            pass
    finally:
        release.set()
        thread.join(5.0)
    # Once the stuck one is done, a turn is free at once.
    began = time.monotonic()
    with turns.turn():
        assert time.monotonic() - began < 0.04
