"""HTTP transport to Kandev: one pooled httpx client, bearer auth and bounded retries.

Every request of the Kandev client (REST and MCP alike) goes through :meth:`KandevHttp.request`:

- network errors, 5xx answers and 503 ``{"status":"starting"}`` are retried with capped
  exponential backoff (tenacity), then become :class:`KandevUnavailable` — or
  :class:`KandevUnconfirmed` when an attempt may have reached Kandev (a read timeout, a
  connection dropped after sending, a 502/504 from a gateway);
- a 429 is retried after its ``Retry-After`` when that fits ``max_retry_after`` (else, and after
  the last attempt, it is handed back with :attr:`Exchange.retry_after` set);
- a 401 becomes :class:`KandevAuthError` at once;
- every other answer (2xx, 4xx) is handed back to the caller to interpret.

Retrying is safe for everything the bot sends (reads, MCP session set-up, and answers: a repeated
answer either wins or reports the winner). The returned :class:`Exchange` says whether an earlier
attempt may already have reached Kandev, so the answer path can recognise its own first attempt.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from kandev_slack.kandev.errors import KandevAuthError, KandevUnavailable, KandevUnconfirmed
from kandev_slack.ops import metrics

log = logging.getLogger(__name__)

USER_AGENT = "kandev-slack"
#: Connections to Kandev open at once, all kept alive between requests: more than the calls
#: that run at once (the answering lane's 32, the reading lane's 8, sync, recovery, the Home
#: and reminder workers), so a crowd's answers reuse warm connections instead of opening (and,
#: over TLS, negotiating) new ones — httpx keeps only 20 alive by default.
MAX_CONNECTIONS = 64

# Failures after which the request may already have been processed by Kandev.
_MAYBE_DELIVERED_ERRORS = (
    httpx.ReadTimeout,
    httpx.ReadError,
    httpx.RemoteProtocolError,
    httpx.WriteError,
    httpx.WriteTimeout,
)
_MAYBE_DELIVERED_STATUSES = frozenset({502, 504})


@dataclass(frozen=True)
class Exchange:
    """A final (non-retried) answer from Kandev."""

    response: httpx.Response
    maybe_duplicate: bool = False
    """True when an earlier attempt of this same request may have been processed by Kandev."""

    @property
    def retry_after(self) -> float | None:
        """Seconds a 429 asked to wait (None: not a 429, or it did not say)."""
        if self.response.status_code != 429:
            return None
        return retry_after_s(self.response)


class _Retryable(Exception):
    """An attempt that failed in a way worth retrying."""

    def __init__(
        self,
        reason: str,
        *,
        maybe_delivered: bool,
        wait: float | None = None,
        response: httpx.Response | None = None,
    ):
        super().__init__(reason)
        self.reason = reason
        self.maybe_delivered = maybe_delivered
        self.wait = wait  # seconds the server asked for (Retry-After), else backoff
        self.response = response  # a reply to hand back should this be the last attempt


def retry_after_s(response: httpx.Response) -> float | None:
    """The ``Retry-After`` of a reply in seconds (delta-seconds or an HTTP date); None when
    absent or unreadable."""
    raw = response.headers.get("Retry-After", "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


#: REST route segments kept in a request's count label (the rest are ids).
_ROUTE_WORDS = frozenset(
    {
        "api",
        "v1",
        "clarification",
        "respond",
        "task-sessions",
        "messages",
        "tasks",
        "workspaces",
        "sessions",
        "ensure",
        "request",
        "health",
        "clarification-inbox",
        "history",
    }
)


def rest_route(method: str, path: str) -> str:
    """``GET /api/v1/task-sessions/s-1/messages`` → ``GET task-sessions/:id/messages``."""
    parts = [p for p in path.split("?", 1)[0].strip("/").split("/") if p]
    words = [p if p in _ROUTE_WORDS else ":id" for p in parts if p not in ("api", "v1")]
    return f"{method} {'/'.join(words)}"


def auth_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class HttpOptions(TypedDict, total=False):
    """How :class:`KandevHttp` talks to Kandev (its keyword arguments, for the callers that
    pass them on)."""

    timeout: float
    retry_attempts: int
    retry_max_wait: float
    retry_initial_wait: float
    max_retry_after: float
    transport: httpx.BaseTransport | None


class KandevHttp:
    """A thread-safe HTTP client for one Kandev server."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 10.0,
        retry_attempts: int = 5,
        retry_max_wait: float = 4.0,
        retry_initial_wait: float = 0.25,
        max_retry_after: float = 5.0,
        transport: httpx.BaseTransport | None = None,
    ):
        if retry_attempts < 1:
            raise ValueError("retry_attempts must be >= 1")
        self.base_url = base_url.rstrip("/")
        self.token = token or None
        self._retry_attempts = retry_attempts
        self._retry_max_wait = retry_max_wait
        self._retry_initial_wait = retry_initial_wait
        #: The longest ``Retry-After`` of a 429 waited out within one call.
        self._max_retry_after = max_retry_after
        self._client = httpx.Client(
            base_url=self.base_url,
            headers={"User-Agent": USER_AGENT, **auth_headers(self.token)},
            timeout=timeout,
            transport=transport,
            limits=httpx.Limits(
                max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS
            ),
        )

    def close(self) -> None:
        self._client.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        retry: bool = True,
        call: str = "",
    ) -> Exchange:
        """Send a request, retrying transient failures; see the module docstring. ``call``:
        what it is in the request count (default: its REST route, ids left out)."""
        maybe_delivered = False
        counted = call or rest_route(method, path)

        def attempt() -> httpx.Response:
            nonlocal maybe_delivered
            metrics.kandev_request(counted)
            try:
                return self._send(method, path, json, params, headers, timeout)
            except _Retryable as exc:
                maybe_delivered = maybe_delivered or exc.maybe_delivered
                raise

        retrying = self._retrying(method, path, retry)
        attempts = 0
        try:
            for attempt_ctx in retrying:
                with attempt_ctx:
                    attempts += 1
                    response = attempt()
        except _Retryable as exc:
            if exc.response is not None:
                # The last attempt was answered (a 429): the caller decides what it means.
                return Exchange(response=exc.response, maybe_duplicate=maybe_delivered)
            error = KandevUnconfirmed if maybe_delivered else KandevUnavailable
            raise error(
                f"Kandev at {self.base_url} is unavailable ({method} {path}: {exc.reason}; "
                f"{attempts} attempt(s))"
                + ("; an attempt may have reached it" if maybe_delivered else "")
            ) from exc.__cause__
        if response.status_code == 401:
            raise KandevAuthError(
                "KANDEV_TOKEN missing or invalid (Kandev answered 401 to "
                f"{method} {path}; {'a token was sent' if self.token else 'no token was sent'})"
            )
        # Only failed (earlier) attempts set maybe_delivered.
        return Exchange(response=response, maybe_duplicate=maybe_delivered)

    def _send(
        self,
        method: str,
        path: str,
        json: Any,
        params: dict[str, Any] | None,
        headers: dict[str, str] | None,
        timeout: float | None,
    ) -> httpx.Response:
        """One attempt; raises _Retryable for what is worth another (saying whether this one
        may have reached Kandev)."""
        try:
            response = self._client.request(
                method,
                path,
                json=json,
                params=params,
                headers=headers,
                timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
            )
        except httpx.TransportError as exc:
            delivered = isinstance(exc, _MAYBE_DELIVERED_ERRORS)
            raise _Retryable(f"{type(exc).__name__}: {exc}", maybe_delivered=delivered) from exc
        if response.status_code >= 500:
            raise _Retryable(
                f"HTTP {response.status_code}: {response.text[:200]}",
                maybe_delivered=response.status_code in _MAYBE_DELIVERED_STATUSES,
            )
        if response.status_code == 429:
            # Refused before any work was done; worth waiting for when it is short.
            asked = retry_after_s(response)
            if asked is None or asked <= self._max_retry_after:
                raise _Retryable(
                    f"HTTP 429 (Retry-After {asked if asked is not None else 'unset'})",
                    maybe_delivered=False,
                    wait=asked,
                    response=response,
                )
        return response

    def _retrying(self, method: str, path: str, retry: bool) -> Retrying:
        """The retry policy: exponential backoff with jitter, or the Retry-After of a 429."""
        backoff = wait_exponential(
            multiplier=self._retry_initial_wait, max=self._retry_max_wait
        ) + wait_random(0, self._retry_initial_wait / 2)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, _Retryable) and exc.wait is not None:
                return exc.wait
            return backoff(state)

        return Retrying(
            stop=stop_after_attempt(self._retry_attempts if retry else 1),
            wait=wait,
            retry=retry_if_exception_type(_Retryable),
            before_sleep=self._log_retry(method, path),
            reraise=True,
        )

    @staticmethod
    def _log_retry(method: str, path: str) -> Callable[[RetryCallState], None]:
        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            log.warning(
                "Kandev %s %s failed (attempt %d): %s; retrying",
                method,
                path,
                state.attempt_number,
                getattr(exc, "reason", exc),
            )

        return before_sleep
