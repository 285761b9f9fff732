"""What a person is waiting for right now, and the follow-up work that waits for it.

A click is acknowledged, then its answer sent to Kandev; everything after that — the other
cards' group lines, the Send-to-all offer, the edits of cards whose outcome is already told —
is follow-up work nobody is waiting on at that instant. In one process they share the
interpreter (and on a small machine the CPUs, with Kandev): a card rendered for a group line
while a crowd clicks delays their acks, and their answers on their way to Kandev.

:class:`Urgency` counts the urgent work in flight in this process — an interaction not yet
acknowledged, an answer recorded but not yet sent to Kandev — and lets follow-up work
:meth:`Urgency.wait_quiet` before each step: it goes on once nothing urgent is in flight, or
after its bound at the latest (follow-up work is delayed, never starved).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kandev_slack.ops import metrics


class Urgent:
    """One piece of urgent work in flight: :meth:`done` once (idempotent) when it is."""

    def __init__(self, urgency: Urgency) -> None:
        self._urgency = urgency
        self._lock = threading.Lock()
        self._done = False

    def done(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        self._urgency._ended()


class Urgency:
    """The urgent work in flight in this process (see the module's doc)."""

    def __init__(self) -> None:
        self._quiet = threading.Condition()
        self._in_flight = 0

    def begin(self) -> Urgent:
        """Urgent work starts (an interaction arrived, an answer was recorded)."""
        with self._quiet:
            self._in_flight += 1
        return Urgent(self)

    def _ended(self) -> None:
        with self._quiet:
            self._in_flight -= 1
            if self._in_flight <= 0:
                self._in_flight = 0
                self._quiet.notify_all()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def wait_quiet(self, max_s: float, what: str = "followup") -> float:
        """Before a step of follow-up work ``what``: wait until no urgent work is in flight,
        ``max_s`` at most. Returns how long it waited."""
        if self._in_flight <= 0 or max_s <= 0:
            return 0.0
        started = time.monotonic()
        deadline = started + max_s
        with self._quiet:
            while self._in_flight > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._quiet.wait(left)
        waited = time.monotonic() - started
        metrics.yielded(what, waited)
        return waited


class Turns:
    """Heavy computations of one kind (a listing of 1,000 waiting items) take turns: one at a
    time, each waiting ``max_wait_s`` at most for its turn (a computation held up by a slow
    look-up must not hold the others up for long: past the bound, the next one goes anyway).

    Python runs one thread at a time: computations run side by side take no less time in
    all, and every ack waiting for the interpreter meanwhile has that many more threads to
    wait behind."""

    def __init__(self, max_wait_s: float, what: str) -> None:
        self._turn = threading.Lock()
        self._max_wait_s = max_wait_s
        self._what = what

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Held while one computation runs (how long it waited for it: the yield histogram,
        labelled ``what``)."""
        started = time.monotonic()
        mine = self._turn.acquire(timeout=self._max_wait_s)
        metrics.yielded(self._what, time.monotonic() - started)
        try:
            yield
        finally:
            if mine:
                self._turn.release()
