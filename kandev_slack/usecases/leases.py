"""Leases that prove this process is alive: the heartbeat behind crash recovery.

Work that may be interrupted by a crash is leased in the store: the outbox items a publisher
took, and the answer submissions on their way to Kandev. A live process renews those leases
every ``HEARTBEAT_S`` seconds (``LeaseKeeper``), so the leases can be short: once a process
dies (SIGKILL, OOM, a lost machine), its work is taken over by whoever runs next — a restarted
process or another replica — a few seconds after its last heartbeat, never while it lives.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass

from kandev_slack.ops.logs import log_failure
from kandev_slack.store import OutboxRepository, SubmissionsRepository

log = logging.getLogger(__name__)

#: Seconds between two renewals of this process's leases.
HEARTBEAT_S = 2.0
#: An outbox lease lasts this long unless renewed (publisher.LEASE_S uses it).
OUTBOX_LEASE_S = 10.0
#: An unfinished submission not renewed for this long belongs to a dead process: crash recovery
#: takes it over, and it no longer counts as on its way to Kandev.
SUBMISSION_LEASE_S = 10.0


class InFlight:
    """The submission keys this process is sending to Kandev right now (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, int] = {}

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._lock:
            self._keys[key] = self._keys.get(key, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._keys[key] - 1
                if left:
                    self._keys[key] = left
                else:
                    del self._keys[key]

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._keys)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._keys


@dataclass(eq=False)
class LeaseKeeper:
    """Renews the publisher's outbox leases and the in-flight submissions' leases."""

    outbox: OutboxRepository
    submissions: SubmissionsRepository
    worker_id: str
    in_flight: InFlight
    _: KW_ONLY
    heartbeat_s: float = HEARTBEAT_S
    outbox_lease_s: float = OUTBOX_LEASE_S
    #: Whether this process's publisher holds outbox items now (None: renew every heartbeat):
    #: between its batches it holds none, and an idle heartbeat writes nothing.
    holding: Callable[[], bool] | None = None

    def renew_once(self) -> tuple[int, int]:
        """Renew now; returns (outbox items, submissions) renewed."""
        items = 0
        if self.holding is None or self.holding():
            items = self.outbox.outbox_renew(self.worker_id, self.outbox_lease_s)
        keys = self.in_flight.keys()
        subs = self.submissions.renew_submissions(keys, SUBMISSION_LEASE_S) if keys else 0
        return items, subs

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(self.heartbeat_s):
            try:
                self.renew_once()
            except Exception:  # a store hiccup must not stop the heartbeat for good
                log_failure(log, "could not renew leases; retrying")
