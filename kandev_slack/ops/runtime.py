"""The interpreter tuned for acks: how often threads hand the interpreter over, and a heap
the garbage collector no longer walks once everything long-lived is built; the C heap kept
in a few arenas."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging

log = logging.getLogger(__name__)

#: How long a thread running Python may keep the interpreter while another waits for it
#: (CPython's default: 5 ms). An ack is a few short steps, each of which may have to wait that
#: long for a thread decoding a listing of 1,000 bundles or finishing earlier clicks; at 0.5 ms
#: those waits stay within the ack's budget, for a few percent more switching.
SWITCH_INTERVAL_S = 0.0005


def settle_heap() -> None:
    """Move everything built so far (modules, models' schemas, the bot's services: it all lives
    as long as the process) out of the garbage collector's sight. A full collection stops every
    thread, an ack's too, for as long as it walks the heap: with 1,000 bundles being decoded it
    took 60–90 ms over that heap, 2–5 ms without it."""
    gc.collect()
    gc.freeze()


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
