"""What /healthz reports: the bot's view of its dependencies, updated by the workers."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class HealthReport:
    ok: bool
    reasons: tuple[str, ...]
    last_sync_age_s: float | None

    def as_json(self) -> dict:
        return {
            "status": "ok" if self.ok else "degraded",
            "reasons": list(self.reasons),
            "last_sync_age_s": None
            if self.last_sync_age_s is None
            else round(self.last_sync_age_s, 3),
        }


class Health:
    """Thread-safe problem registry: each component sets or clears its own problem."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._problems: dict[str, str] = {}
        self._last_sync: float | None = None

    def problem(self, component: str, reason: str) -> None:
        with self._lock:
            self._problems[component] = reason

    def clear(self, component: str) -> None:
        with self._lock:
            self._problems.pop(component, None)

    def synced(self) -> None:
        with self._lock:
            self._last_sync = time.monotonic()

    def report(self) -> HealthReport:
        with self._lock:
            reasons = tuple(f"{k}: {v}" for k, v in sorted(self._problems.items()))
            age = None if self._last_sync is None else time.monotonic() - self._last_sync
        return HealthReport(ok=not reasons, reasons=reasons, last_sync_age_s=age)
