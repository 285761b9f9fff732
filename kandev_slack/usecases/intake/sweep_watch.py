"""A sweep said in /healthz: one that failed, left some items unread, or ran past its
deadline is a problem of its component until a sweep completes in time; one still running past
its deadline is said while it runs (a check run on every /healthz)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sized
from dataclasses import dataclass
from typing import Protocol, TypeVar

from kandev_slack.kandev.errors import KandevError
from kandev_slack.ops.health import Health

log = logging.getLogger(__name__)


class Swept(Protocol):
    """What a sweep reports: the items it could not read."""

    @property
    def unread(self) -> Sized: ...


R = TypeVar("R", bound=Swept)


@dataclass(eq=False)
class SweepWatch:
    """``component``: its /healthz entry; ``what``: how a sweep is called there;
    ``deadline``: how long one may take (seconds)."""

    health: Health
    component: str
    what: str
    deadline: float
    _started: float | None = None

    def __post_init__(self) -> None:
        self.health.watch(self.component, self.overrun)

    def run(self, sweep: Callable[[], R]) -> R | None:
        """Run ``sweep`` and say how it went (None: it failed)."""
        started = self._started = time.monotonic()
        try:
            report = sweep()
        except Exception as exc:
            self.health.failure(self.component, f"{self.what} failed", exc)
            if isinstance(exc, KandevError):
                log.warning("%s failed, retrying next cycle: %s", self.what, exc)
            else:
                log.exception("%s failed", self.what)
            return None
        finally:
            self._started = None
        took = time.monotonic() - started
        if len(report.unread):
            unread = f"{self.what} could not read {len(report.unread)} task(s)"
            self.health.problem(self.component, unread)
        elif took > self.deadline:
            over = f"{self.what} took {took:.0f} s (deadline {self.deadline:.0f} s)"
            self.health.problem(self.component, over)
        else:
            self.health.clear(self.component)
        return report

    def overrun(self) -> str | None:
        """A /healthz check: the sweep in progress has run past its deadline."""
        started = self._started
        if started is None:
            return None
        running = time.monotonic() - started
        if running <= self.deadline:
            return None
        return f"{self.what} running for {running:.0f} s (deadline {self.deadline:.0f} s)"
