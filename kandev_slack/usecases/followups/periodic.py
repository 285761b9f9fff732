"""A worker that looks at the store every second and enqueues what is due (reminders,
escalations, subscribers' DM cards): one loop, one way to report a failing round."""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from dataclasses import KW_ONLY, dataclass

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
    :meth:`work_once`."""

    health: Health
    interval_s: float
    #: The /healthz component and the problem shown while rounds fail.
    component = "periodic"
    failing = "store error"

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.work_once()
                self.health.clear(self.component)
            except Exception:  # a store outage must not kill the worker
                log_failure(log, "%s: a round failed; retrying", self.component)
                self.health.problem(self.component, self.failing)
            stop.wait(self.interval_s)

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
