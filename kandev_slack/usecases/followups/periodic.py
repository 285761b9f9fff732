"""A worker that looks at the store every second and enqueues what is due (reminders,
escalations, subscribers' DM cards): one loop, one way to report a failing round. Given the
store's count of changes, a worker settles after a round that found nothing (see
kandev_slack/core/timing/settled.py)."""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

from kandev_slack.core.timing.settled import SETTLED_LOOK_S, Settled
from kandev_slack.ops.health import Health
from kandev_slack.ops.logs import log_failure
from kandev_slack.store import FollowupsRepository
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.outbox.publisher import Publisher

log = logging.getLogger(__name__)

#: How often a periodic worker looks for what is due.
INTERVAL_S = 1.0


class PeriodicLoop(ABC):
    """The loop every periodic worker shares: a round every ``interval_s``, its failures
    reported in /healthz as ``component`` (``failing``) until a round succeeds again. A
    subclass (a dataclass) has ``health`` and ``interval_s`` and does one round in
    :meth:`work_once`; one that reports its failures elsewhere overrides
    :meth:`round_done` and :meth:`round_failed` (and needs no ``health``)."""

    health: Health
    interval_s: float
    #: The /healthz component and the problem shown while rounds fail.
    component = "periodic"
    failing = "store error"

    #: The store's count of this process's changing writes (``Sql.writes``): after a round
    #: that found nothing the worker looks again once that count moves, when the clock makes
    #: something due (:meth:`next_due_s`), or every ``settled_s`` all the same. None: a round
    #: every ``interval_s``.
    changes: Callable[[], int] | None = None
    settled_s: float = SETTLED_LOOK_S

    def run(self, stop: threading.Event) -> None:
        settled: Settled | None = None  # a round found nothing: when to look again
        while not stop.is_set():
            try:
                if settled is None or settled.moved(self.changes, self.settled_s):
                    seen = self.changes() if self.changes is not None else None
                    done = self.work_once()
                    settled = None
                    if seen is not None and not done:
                        due_s = self.next_due_s()
                        if due_s is None or due_s > 0.0:
                            settled = Settled(seen, time.monotonic(), due_s)
                self.round_done()
            except Exception as exc:  # a store outage must not kill the worker
                settled = None
                self.round_failed(exc)
            stop.wait(self.interval_s)

    def round_done(self) -> None:
        """A round went through: its component is well again."""
        self.health.clear(self.component)

    def round_failed(self, exc: Exception) -> None:
        """A round raised ``exc``: logged, and shown in /healthz until a round goes through
        (the next one is tried after ``interval_s`` all the same)."""
        log_failure(log, "%s: a round failed; retrying", self.component)
        self.health.problem(self.component, self.failing)

    def next_due_s(self) -> float | None:
        """Seconds until the clock alone makes something due (0: look every interval;
        None: only a change does). Asked after a round that found nothing, when
        :attr:`changes` is set."""
        return None

    @abstractmethod
    def work_once(self) -> int:
        """One round; returns how much was done."""


@dataclass(eq=False)
class PeriodicWorker(PeriodicLoop):
    """A periodic worker on the follow-ups (reminders, escalation, subscribers' DM cards)."""

    followups: FollowupsRepository
    answerers: Answerers
    publisher: Publisher
    health: Health
    _: KW_ONLY
    interval_s: float = INTERVAL_S
    changes: Callable[[], int] | None = None
