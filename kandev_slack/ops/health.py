"""What /healthz reports: the bot's view of its dependencies, updated by the workers.

A reason is a short sentence of the bot's own: never an exception's text (which can hold a URL
with credentials, SQL or a traceback). :meth:`Health.failure` names an exception by its type
only, and :meth:`Health.problem` keeps one short line of any reason, without URL userinfo.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kandev_slack.ops.redaction import Redactor

#: The longest reason /healthz shows (longer ones are cut with "…").
MAX_REASON_CHARS = 200

_SQL = re.compile(r"\[SQL:.*", re.DOTALL)  # how SQLAlchemy appends a statement to its errors
_redact_urls = Redactor()
log = logging.getLogger(__name__)

#: A check run each time health is reported: a short reason when something is wrong, else None.
Check = Callable[[], str | None]


def safe_reason(reason: str) -> str:
    """``reason`` as /healthz may show it: its first line, no SQL, no URL userinfo, short."""
    lines = reason.strip().splitlines()
    text = _SQL.sub("", lines[0] if lines else "").strip()
    text = _redact_urls(text) or "unknown problem"
    if len(text) > MAX_REASON_CHARS:
        text = text[: MAX_REASON_CHARS - 1].rstrip() + "…"
    return text


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
        self._checks: dict[str, Check] = {}
        self._last_sync: float | None = None

    def watch(self, component: str, check: Check) -> None:
        """Run ``check`` whenever health is reported (e.g. "does the database answer?"): its
        problem is there exactly while it reports one."""
        with self._lock:
            self._checks[component] = check

    def problem(self, component: str, reason: str) -> None:
        """``component`` has a problem; ``reason`` is a short sentence (see :func:`safe_reason`)."""
        with self._lock:
            self._problems[component] = safe_reason(reason)

    def failure(self, component: str, what: str, error: BaseException) -> None:
        """``component`` failed with ``error``: shown as ``what (ErrorType)``, never the error's
        text (logs have it, redacted)."""
        self.problem(component, f"{what} ({type(error).__name__})")

    def clear(self, component: str) -> None:
        with self._lock:
            self._problems.pop(component, None)

    def synced(self) -> None:
        with self._lock:
            self._last_sync = time.monotonic()

    def report(self) -> HealthReport:
        with self._lock:
            checks = dict(self._checks)
        found = {name: reason for name, check in checks.items() if (reason := _run(check, name))}
        with self._lock:
            problems = {**self._problems, **found}
            reasons = tuple(f"{k}: {v}" for k, v in sorted(problems.items()))
            age = None if self._last_sync is None else time.monotonic() - self._last_sync
        return HealthReport(ok=not reasons, reasons=reasons, last_sync_age_s=age)


def _run(check: Check, name: str) -> str | None:
    try:
        reason = check()
    except Exception as exc:  # a check that fails is a problem, said safely
        log.warning("health check %s failed: %s", name, type(exc).__name__)
        return f"check failed ({type(exc).__name__})"
    return safe_reason(reason) if reason else None
