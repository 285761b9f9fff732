"""Bounded lanes for the work behind interactions (Kandev calls, listings), apart from the
threads that acknowledge Slack.

A lane runs at most ``workers`` jobs at once and lets at most ``waiting`` more wait. A job
reserves its place before the interaction is acknowledged, so a full lane is known at once and
the person is told "busy, try again" within Slack's 3 s instead of waiting silently; slow Kandev
or Slack calls fill their own lane and never hold up another person's ack.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from kandev_slack.ops.logs import ContextExecutor

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Answers on their way to Kandev at once, and how many more may wait their turn (then:
#: "busy"). A crowd is taken whole: 50 people clicking within a second are all in flight at
#: once when Kandev takes a second per answer (a busy machine), and 32 Kandev calls at a time
#: (Kandev's own concurrency, not a queue in front of it) clear them in about two seconds. A
#: waiting answer is a recorded submission and a closure (a few KB), so the waiting room holds
#: a burst of a few hundred clicks. "Busy" is for a Kandev that stopped answering: then 256
#: people wait at most Kandev's timeout and the next are told at once.
ANSWERING_WORKERS, ANSWERING_WAITING = 32, 224
#: Listings and Home tabs built at once, and how many more may wait (then: "busy"). Fifty
#: people running /kandev-questions within a second while each listing takes Kandev a second
#: are all taken (with 4 + 8, 29 of them were told "busy"): 8 reads of Kandev at a time clear
#: them in a few seconds, the slash command answering later through its response_url.
READING_WORKERS, READING_WAITING = 8, 56
#: Follow-up work after an answer's verdict (the Send-to-all offer), after the urgent work in
#: flight (kandev_slack/ops/urgency.py), one at a time: a crowd's offers wait their turn (a
#: few hundred of them), and beyond that are left out — counted and logged, never a durable
#: write (the answer itself is sent and told; card edits and group lines are the outbox's).
FOLLOWUP_WORKERS, FOLLOWUP_WAITING = 1, 255


class Place:
    """A reserved place in a lane: :meth:`run` one job in it, or :meth:`release` it unused."""

    def __init__(self, lane: Lane) -> None:
        self._lane = lane
        self._used = False
        self._lock = threading.Lock()

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
        with self._lock:
            if self._used:
                raise RuntimeError("a lane place runs one job")
            self._used = True
        future = self._lane._executor.submit(fn, *args, **kwargs)
        future.add_done_callback(lambda _f: self._lane._places.release())
        return future

    def release(self) -> None:
        with self._lock:
            if self._used:
                return
            self._used = True
        self._lane._places.release()


class Lane:
    def __init__(self, name: str, *, workers: int, waiting: int) -> None:
        self.name = name
        self._executor = ContextExecutor(max_workers=workers, thread_name_prefix=name)
        self._places = threading.BoundedSemaphore(workers + waiting)

    def reserve(self) -> Place | None:
        """A place for one job, or None when the lane is full (never waits)."""
        if not self._places.acquire(blocking=False):
            log.warning("the %s lane is full: an interaction is told to try again", self.name)
            return None
        return Place(self)

    def shutdown(self, *, wait: bool = True, cancel: bool = False) -> None:
        """Stop taking jobs; ``wait`` for the running ones; ``cancel`` the ones not started."""
        self._executor.shutdown(wait=wait, cancel_futures=cancel)


def when_done(future: Future[T], use: Callable[[T], None], what: str) -> None:
    """Call ``use`` with the job's result once it is done (after the interaction was
    acknowledged); a job that failed is logged as ``what``."""

    def done(finished: Future[T]) -> None:
        try:
            result = finished.result()
        except Exception:
            log.exception("%s failed", what)
            return
        use(result)

    future.add_done_callback(done)
