"""The TTL cache used for tasks and workspaces."""

import threading

import pytest

from kandev_slack.kandev.cache import TtlCache


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_values_live_for_the_ttl_then_reload():
    clock = Clock()
    cache: TtlCache[int] = TtlCache(30, clock=clock)
    loads = []

    def load():
        loads.append(1)
        return len(loads)

    assert cache.get_or_load("k", load) == 1
    clock.now = 29.9
    assert cache.get_or_load("k", load) == 1
    clock.now = 30.1
    assert cache.get_or_load("k", load) == 2


def test_failed_loads_are_not_cached_and_size_is_bounded():
    clock = Clock()
    cache: TtlCache[str] = TtlCache(30, max_entries=2, clock=clock)

    failures = []

    def fail():
        failures.append(1)
        raise LookupError("nope")

    for _ in range(2):
        with pytest.raises(LookupError):
            cache.get_or_load("bad", fail)
    assert len(failures) == 2
    for key in "abc":
        cache.get_or_load(key, lambda k=key: k)
    assert len(cache._entries) == 2
    assert cache.get_or_load("c", lambda: "reloaded") == "c"


def test_concurrent_readers_get_a_value():
    cache: TtlCache[int] = TtlCache(30)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_load("k", lambda: 7)))
        for _ in range(16)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [7] * 16
