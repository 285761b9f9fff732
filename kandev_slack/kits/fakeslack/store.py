"""The fake workspace's memory, shared by the HTTP threads and the test thread.

One re-entrant lock guards everything; every change notifies waiters, so tests can block on
`wait_for` instead of sleeping.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

from kandev_slack.kits.fakeslack.records import (
    CallRecord,
    Ephemeral,
    JsonDict,
    PostedMessage,
    ResponseUrlPost,
    ViewRecord,
    Violation,
)

T = TypeVar("T")


def ts_key(ts: str) -> Decimal:
    return Decimal(ts)


@dataclass
class Trigger:
    user: str
    issued_at: float
    used: bool = False


class SlackState:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)
        self.calls: list[CallRecord] = []
        self.channel_messages: dict[str, dict[str, PostedMessage]] = {}
        self.ephemerals: list[Ephemeral] = []
        self.views: dict[str, ViewRecord] = {}
        self.modal_order: list[str] = []
        self.modal_stacks: dict[str, list[str]] = {}
        self.homes: dict[str, str] = {}
        self.violations: list[Violation] = []
        self.response_posts: list[ResponseUrlPost] = []
        self.triggers: dict[str, Trigger] = {}

    # -- writes -------------------------------------------------------------------------------
    def changed(self) -> None:
        with self.lock:
            self._changed.notify_all()

    def record_call(
        self,
        method: str,
        params: JsonDict,
        token: str | None,
        status: int,
        response: JsonDict,
    ) -> CallRecord:
        with self.lock:
            record = CallRecord(
                index=len(self.calls),
                method=method,
                params=copy.deepcopy(params),
                at=time.time(),
                token=token,
                status=status,
                response=copy.deepcopy(response),
            )
            self.calls.append(record)
            self._changed.notify_all()
            return record

    def add_violations(self, found: list[Violation]) -> None:
        if found:
            with self.lock:
                self.violations.extend(found)
                self._changed.notify_all()

    def add_message(self, message: PostedMessage) -> None:
        with self.lock:
            self.channel_messages.setdefault(message.channel, {})[message.ts] = message
            self._changed.notify_all()

    def add_ephemeral(self, ephemeral: Ephemeral) -> None:
        with self.lock:
            self.ephemerals.append(ephemeral)
            self._changed.notify_all()

    def add_response_post(self, post: ResponseUrlPost) -> None:
        with self.lock:
            self.response_posts.append(post)
            self._changed.notify_all()

    # -- reads --------------------------------------------------------------------------------
    def find_message(self, channel: str, ts: str) -> PostedMessage | None:
        with self.lock:
            return self.channel_messages.get(channel, {}).get(ts)

    def live_messages(self, channel: str) -> list[PostedMessage]:
        """Messages not deleted, oldest first."""
        with self.lock:
            found = [m for m in self.channel_messages.get(channel, {}).values() if not m.deleted]
        return sorted(found, key=lambda m: ts_key(m.ts))

    def view_stack(self, user: str) -> list[ViewRecord]:
        with self.lock:
            return [self.views[v] for v in self.modal_stacks.get(user, [])]

    def wait_for(
        self, predicate: Callable[[], T | None], timeout: float = 5.0, description: str = ""
    ) -> T:
        """Block until `predicate()` is truthy (re-checked on every change); return its value."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                value = predicate()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    what = description or getattr(predicate, "__name__", "condition")
                    raise TimeoutError(f"fake Slack: timed out after {timeout}s waiting for {what}")
                # Wake up periodically too: time-based predicates change without a notify.
                self._changed.wait(min(remaining, 0.05))

    def snapshot_calls(self, method: str | None = None) -> list[CallRecord]:
        with self.lock:
            return [c for c in self.calls if method is None or c.method == method]

    def describe(self) -> dict[str, Any]:
        with self.lock:
            return {
                "calls": [c.method for c in self.calls],
                "messages": {ch: len(msgs) for ch, msgs in self.channel_messages.items()},
                "ephemerals": len(self.ephemerals),
                "views": len(self.views),
            }
