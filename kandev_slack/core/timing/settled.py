"""When a worker that found nothing to do looks again: a change, the clock, or a while.

A worker that looks at the store on a timer (the publisher, the periodic workers, crash
recovery) and found nothing need not look again every second: only a change made here (the
store's count of this process's changing writes), the time something falls due, or — for what
another replica changed and then could not finish, because it died — a few seconds gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

#: How often a settled worker looks all the same while nothing changed here.
SETTLED_LOOK_S = 5.0


@dataclass(frozen=True)
class Settled:
    """A worker's round found nothing: the store's count of changes then (``seen``), when
    (monotonic), and in how many seconds the clock makes something due (None: never)."""

    seen: int
    at: float
    due_s: float | None

    def moved(self, changes: Callable[[], int] | None, settled_s: float) -> bool:
        """Whether a round is due again: a change here, the clock, or ``settled_s`` gone."""
        waited = time.monotonic() - self.at
        if waited >= settled_s or (self.due_s is not None and waited >= self.due_s):
            return True
        return changes is not None and changes() != self.seen

    def left_s(self) -> float | None:
        """Seconds until the clock makes something due (None: never)."""
        if self.due_s is None:
            return None
        return max(self.at + self.due_s - time.monotonic(), 0.0)
