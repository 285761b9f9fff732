"""The interpreter tuned for acks: how often threads hand the interpreter over, and a heap
the garbage collector no longer walks once everything long-lived is built; the C heap kept
in a few arenas."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

#: How long a thread running Python may keep the interpreter while another waits for it:
#: CPython's own 5 ms. Each thread waiting for the interpreter wakes every interval to ask
#: for it, and a crowd keeps dozens waiting. At 0.5 ms (this setting until 2026-12-07) a crowd
#: of 150 clicks cost the bot more CPU per click (21.4 / 19.5 / 22.2 ms against 18.8 / 18.6 /
#: 21.4, alternated) and its acks were no faster (p50 20.5 / 15.2 / 22.9 ms against 15.7 /
#: 10.6 / 14.7); with 1,010 waiting, the slash command's ack p99 was 29 ms and time to card
#: p95 64 ms (floor 26) at 5 ms (`python -m bench.click_cost`, `--only notice --only queues`;
#: docs/performance.md). The 0.5 ms was chosen when decoding Kandev's list of 1,000 held the
#: interpreter for 12 ms at a time; it is decoded bundle by bundle now.
SWITCH_INTERVAL_S = 0.005


def settle_heap() -> None:
    """Move everything built so far (modules, models' schemas, the bot's services: it all lives
    as long as the process) out of the garbage collector's sight. A full collection stops every
    thread, an ack's too, for as long as it walks the heap: with 1,000 bundles being decoded it
    took 60–90 ms over that heap, 2–5 ms without it."""
    gc.collect()
    gc.freeze()


class GcPauses:
    """Times each collection of generation ``from_generation`` or older (``gc.callbacks``) and
    hands it to ``record(generation, seconds)``. Generation 0 is left out: it runs every few
    hundred allocations and takes microseconds. Collections never overlap (the collector does
    not start another while one runs), so one start time is enough."""

    def __init__(
        self,
        record: Callable[[int, float], None],
        *,
        from_generation: int = 1,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._record, self._from, self._clock = record, from_generation, clock
        self._started: float | None = None

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        generation = info.get("generation", 0)
        if generation < self._from:
            return
        if phase == "start":
            self._started = self._clock()
        elif self._started is not None:
            self._record(generation, self._clock() - self._started)
            self._started = None

    def install(self) -> None:
        if self not in gc.callbacks:
            gc.callbacks.append(self)

    def remove(self) -> None:
        if self in gc.callbacks:
            gc.callbacks.remove(self)


#: glibc's ``mallopt`` parameter for the most arenas the C heap may have.
_M_ARENA_MAX = -8
#: Arenas the bot's C heap may use (glibc's default: 8 per CPU).
MALLOC_ARENAS = 2


def fewer_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Keep glibc's heap in ``arenas`` arenas. By default each thread that allocates while
    another holds an arena gets one of its own, up to 8 per CPU, and what a thread frees stays
    in its arena: the bot's threads (34 at rest, more in a crowd) each kept the high-water
    mark of whatever they once decoded (a listing of 1,000 bundles here, a page of tasks
    there), summed in the process's memory. Call it before any thread starts. False where
    the C library has no ``mallopt`` (not glibc): nothing changes there."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    if mallopt(_M_ARENA_MAX, arenas) != 1:
        log.warning("the C library refused to keep its heap in %d arenas", arenas)
        return False
    return True
