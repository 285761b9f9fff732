"""How long each Slack request waits for its acknowledgement, by interaction kind.

A global Bolt middleware runs first for every request (HTTP and Socket Mode alike) and gives
the request a timed ``ack``: the listeners' ack (and Bolt's automatic one for events) records
the time from the request reaching the app to the ack in the metrics. It also names the
person and the channel of the request for the log lines written while it is handled.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App, BoltRequest, BoltResponse

from bot.ops import metrics
from bot.ops.logs import new_log_context

_KINDS = {
    "block_actions": "block_actions",
    "view_submission": "view_submission",
    "view_closed": "view_closed",
    "shortcut": "shortcut",
    "message_action": "shortcut",
    "event_callback": "event",
}


def interaction_kind(body: Any) -> str:
    """``block_actions``, ``view_submission``, ``view_closed``, ``shortcut``, ``command`` or
    ``event``: the kind of a Slack request body."""
    if not isinstance(body, dict):
        return "event"
    if "command" in body and "type" not in body:
        return "command"
    return _KINDS.get(str(body.get("type", "")), "event")


class TimedAck(Ack):
    """Bolt's ack that records, once, how long after ``started`` it was first called, and
    signals its response the moment it is set (:meth:`wait`; see ack_wait.py)."""

    def __init__(self, kind: str, started: float) -> None:
        self._answered = threading.Event()
        super().__init__()
        self._kind = kind
        self._started = started
        self._lock = threading.Lock()
        self._timed = False

    @property  # type: ignore[override]
    def response(self) -> BoltResponse | None:
        return self._response

    @response.setter
    def response(self, value: BoltResponse | None) -> None:
        # Bolt sets it in ack() and, when a listener fails before acking, directly.
        self._response = value
        if value is not None:
            self._answered.set()

    def wait(self, timeout: float) -> bool:
        """Block until the response is set (True) or ``timeout`` seconds passed (False)."""
        return self._answered.wait(max(timeout, 0.0))

    def __call__(self, *args: Any, **kwargs: Any) -> BoltResponse:
        with self._lock:
            first, self._timed = not self._timed, True
        if first:
            metrics.acked(self._kind, time.perf_counter() - self._started)
        return super().__call__(*args, **kwargs)


def _time_acks(req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]) -> Any:  # noqa: A002 - Bolt passes it by this name
    context = req.context
    current = context.get("ack")
    if current is None or current.response is None:  # Bolt makes one early; not used yet
        context["ack"] = TimedAck(interaction_kind(req.body), time.perf_counter())
    # Listeners run after every middleware, in threads that copy this context (ContextExecutor).
    new_log_context(user=context.user_id, channel=context.channel_id)
    return next()


def install_ack_timing(app: App) -> None:
    """Time every acknowledgement of ``app`` (register before any other middleware)."""
    app.middleware(_time_acks)
