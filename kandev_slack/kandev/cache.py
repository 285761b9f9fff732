"""A small thread-safe time-to-live cache for rarely changing lookups (tasks, workspaces)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class TtlCache(Generic[V]):
    """Maps keys to values for ``ttl`` seconds; loads outside the lock (a rare double load is
    cheaper than serialising every lookup behind one slow request)."""

    def __init__(
        self,
        ttl: float,
        *,
        max_entries: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._ttl = ttl
        self._max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[Hashable, tuple[float, V]] = {}

    def get_or_load(self, key: Hashable, load: Callable[[], V]) -> V:
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] > now:
                return entry[1]
        value = load()
        with self._lock:
            if len(self._entries) >= self._max_entries:
                self._evict(now)
            self._entries[key] = (self._clock() + self._ttl, value)
        return value

    def _evict(self, now: float) -> None:
        expired = [k for k, (until, _) in self._entries.items() if until <= now]
        for k in expired:
            del self._entries[k]
        while len(self._entries) >= self._max_entries:
            del self._entries[next(iter(self._entries))]
