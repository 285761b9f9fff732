"""The interpreter tuned for acks: how often threads hand the interpreter over, and a heap
the garbage collector no longer walks once everything long-lived is built."""

from __future__ import annotations

import gc

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
