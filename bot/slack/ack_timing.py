"""How long each Slack request waits for its acknowledgement, by interaction kind.

Every request gets a timed ``ack`` (:class:`TimedAck`, put in its Bolt context before Bolt
dispatches it, bot/slack/ack_wait.py): the listeners' ack and Bolt's automatic one for events
record the time from the request reaching the app to the first ack in the metrics, and signal
the thread that answers Slack the moment that ack exists.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from slack_bolt import Ack, BoltResponse

from bot.ops import metrics

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
    """Bolt's ack that records, once, how long after ``started`` it was first called, keeps
    that first response, and signals it the moment it exists (:meth:`wait`).

    :meth:`settle` ends the wait without an ack (Bolt finished the request: it refused it,
    no listener claimed it, or the listener failed before acking)."""

    def __init__(self, kind: str, started: float) -> None:
        super().__init__()
        self._kind = kind
        self._started = started
        self._lock = threading.Lock()
        self._first: BoltResponse | None = None
        self._settled = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> BoltResponse:
        response = super().__call__(*args, **kwargs)
        with self._lock:
            first = self._first is None
            if first:
                self._first = response
        if first:
            metrics.acked(self._kind, time.perf_counter() - self._started)
            self._settled.set()
        return response

    @property
    def first_response(self) -> BoltResponse | None:
        """What the first ack answered (None: not acked yet). Later acks, and the 500 Bolt
        records when a listener fails after its ack, do not change it: it has been sent."""
        return self._first

    def settle(self) -> None:
        """The request is finished, acked or not: end any :meth:`wait`."""
        self._settled.set()

    def wait(self, timeout: float) -> bool:
        """Block until the first ack or :meth:`settle` (True), or ``timeout`` seconds (False)."""
        return self._settled.wait(max(timeout, 0.0))
