"""Fail closed: items (bundles, approvals) whose route cannot be decided are posted nowhere,
tried again with backoff, and shown in /healthz until they can be routed or are gone."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass

from kandev_slack.ops.backoff import doubling, wait_for
from kandev_slack.ops.health import Health

log = logging.getLogger(__name__)

#: First and longest wait before an item whose route could not be determined is tried again.
UNROUTABLE_RETRY_S = (1.0, 30.0)


@dataclass
class Unroutable:
    """An item that waits because its route cannot be determined (never posted by default)."""

    reason: str
    attempts: int
    next_try: float  # monotonic time


class Unroutables:
    """The items of one kind that cannot be routed, by key; ``component``: their /healthz
    entry; ``noun``: what one is called (``question``, ``approval``)."""

    def __init__(self, health: Health, component: str, noun: str) -> None:
        self.health, self.component, self.noun = health, component, noun
        self.items: dict[str, Unroutable] = {}
        self._wait = doubling(*UNROUTABLE_RETRY_S)
        #: Several loops may meet the same items (an approval's hints and its sweep).
        self._lock = threading.RLock()

    def due(self, key: str) -> bool:
        """Whether ``key`` may be tried now (never failed, or its wait is over)."""
        with self._lock:
            waiting = self.items.get(key)
        return waiting is None or time.monotonic() >= waiting.next_try

    def failed(self, key: str, reason: str) -> bool:
        """``key`` cannot be routed (``reason``): tried again after a doubling wait. False."""
        with self._lock:
            attempts = self.items[key].attempts + 1 if key in self.items else 1
            wait = wait_for(self._wait, attempts)
            self.items[key] = Unroutable(reason, attempts, time.monotonic() + wait)
            self.report()
        log.warning("%s %s cannot be routed (%s); retrying in %.0f s", self.noun, key, reason, wait)
        return False

    def routed(self, key: str) -> None:
        with self._lock:
            self.items.pop(key, None)

    def report(self, active: Collection[str] | None = None) -> None:
        """Say in /healthz what cannot be routed (forgetting the keys not in ``active``)."""
        with self._lock:
            self._report(active)

    def _report(self, active: Collection[str] | None) -> None:
        if active is not None:
            for gone in set(self.items) - set(active):
                del self.items[gone]
        if not self.items:
            self.health.clear(self.component)
            return
        count = len(self.items)
        what = f"{self.noun} cannot" if count == 1 else f"{self.noun}s cannot"
        reasons = sorted({u.reason for u in self.items.values()})
        self.health.problem(self.component, f"{count} {what} be routed: {'; '.join(reasons)}")
