"""Fault injection: scripted per-method answers (429, 5xx, errors, delays, a connection dropped
after the call was carried out) and Slack's per-channel chat.postMessage rate limit."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

JsonDict = dict[str, Any]
ANY_METHOD = "*"


@dataclass
class ScriptedResponse:
    """What the next matching call gets. `body=None` means: wait `delay`, then answer normally.
    `drop=True`: carry the call out normally, then close the connection without replying."""

    status: int = 200
    body: JsonDict | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    remaining: int | None = 1  # None: every call from now on
    drop: bool = False
    #: Only for calls naming this conversation (``channel``, as the caller sent it or as it
    #: resolves: a user id stands for their DM); None: for every call of the method. A call
    #: no queued answer is for passes the others by (Slack limits posting per channel).
    channel: str | None = None


@dataclass
class _Bucket:
    tokens: float
    updated: float


class ChannelRateLimit:
    """A token bucket per channel: `per_second` sustained, `burst` at once, like Slack's
    "about one message per second per channel, short bursts allowed"."""

    def __init__(self, per_second: float, burst: int) -> None:
        self.per_second = per_second
        self.burst = burst
        self._buckets: dict[str, _Bucket] = {}

    def retry_after(self, channel: str, now: float) -> int | None:
        """None if a message may be posted now (and count it); else whole seconds to wait."""
        bucket = self._buckets.setdefault(channel, _Bucket(float(self.burst), now))
        bucket.tokens = min(
            float(self.burst), bucket.tokens + (now - bucket.updated) * self.per_second
        )
        bucket.updated = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return None
        return max(1, math.ceil((1.0 - bucket.tokens) / self.per_second))


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scripted: dict[str, list[ScriptedResponse]] = {}
        self._post_limit: ChannelRateLimit | None = None

    def script(self, method: str, response: ScriptedResponse) -> None:
        """Queue `response` for `method` (or "*" for every method); queued ones apply in order."""
        with self._lock:
            self._scripted.setdefault(method, []).append(response)

    def rate_limit(
        self,
        method: str,
        retry_after: int = 1,
        times: int | None = 1,
        *,
        channel: str | None = None,
    ) -> None:
        """HTTP 429 + Retry-After + {"ok":false,"error":"ratelimited"}, as Slack answers
        (``channel``: only to calls naming that conversation)."""
        self.script(
            method,
            ScriptedResponse(
                status=429,
                body={"ok": False, "error": "ratelimited"},
                headers={"Retry-After": str(retry_after)},
                remaining=times,
                channel=channel,
            ),
        )

    def allow(self, method: str, times: int = 1, *, channel: str | None = None) -> None:
        """The next ``times`` matching calls are answered normally (queued among the other
        scripted answers: a 429 scripted after this one comes after them)."""
        self.script(method, ScriptedResponse(remaining=times, channel=channel))

    def server_error(self, method: str, status: int = 500, times: int | None = 1) -> None:
        error = "service_unavailable" if status == 503 else "internal_error"
        self.script(
            method,
            ScriptedResponse(status=status, body={"ok": False, "error": error}, remaining=times),
        )

    def error(self, method: str, error: str, times: int | None = 1, **extra: Any) -> None:
        """HTTP 200 with {"ok": false, "error": error} (e.g. "channel_not_found")."""
        self.script(
            method,
            ScriptedResponse(body={"ok": False, "error": error, **extra}, remaining=times),
        )

    def slow(self, method: str, seconds: float, times: int | None = 1) -> None:
        """Answer normally, but only after `seconds`."""
        self.script(method, ScriptedResponse(delay=seconds, remaining=times))

    def accept_then_drop(self, method: str, times: int | None = 1) -> None:
        """Carry the call out (e.g. the message is posted), then drop the connection before
        replying: the caller cannot know it succeeded."""
        self.script(method, ScriptedResponse(drop=True, remaining=times))

    def limit_post_message(self, per_second: float = 1.0, burst: int = 3) -> None:
        """Enforce a per-channel chat.postMessage rate limit (429 + Retry-After beyond it)."""
        with self._lock:
            self._post_limit = ChannelRateLimit(per_second, burst)

    def clear(self) -> None:
        with self._lock:
            self._scripted.clear()
            self._post_limit = None

    def take(self, method: str, channels: frozenset[str] = frozenset()) -> ScriptedResponse | None:
        """The scripted answer for this call, if any (consumes one use): the first queued for
        ``method`` (else for every method) that is for every conversation or for one of
        ``channels`` (the conversation the call names, as sent and as resolved)."""
        with self._lock:
            for key in (method, ANY_METHOD):
                queue = self._scripted.get(key) or []
                index = next(
                    (i for i, r in enumerate(queue) if r.channel is None or r.channel in channels),
                    None,
                )
                if index is None:
                    continue
                response = queue[index]
                if response.remaining is not None:
                    response.remaining -= 1
                    if response.remaining <= 0:
                        queue.pop(index)
                return response
        return None

    def post_message_retry_after(self, channel: str) -> int | None:
        with self._lock:
            if self._post_limit is None:
                return None
            return self._post_limit.retry_after(channel, time.monotonic())
