"""The slack-sdk WebClient the bot calls Slack through: retries for connection and server
errors of the calls that are safe to repeat, never of a post."""

from __future__ import annotations

from urllib.parse import urlsplit

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

#: Methods whose repetition repeats their effect (a second message, a second modal). When the
#: connection drops or Slack answers 5xx, the call may have been carried out all the same, so
#: the client never re-sends these by itself: the caller decides (the outbox worker looks a
#: card up in its channel before posting it again).
NOT_REPEATABLE = frozenset({"chat.postMessage", "chat.postEphemeral", "views.open", "views.push"})


def _method(request: HttpRequest) -> str:
    return urlsplit(request.url).path.rstrip("/").rsplit("/", 1)[-1]


class _RepeatableOnly(RetryHandler):
    """Retries only the calls that are safe to repeat (see ``NOT_REPEATABLE``)."""

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if _method(request) in NOT_REPEATABLE:
            return False
        return super()._can_retry(state=state, request=request, response=response, error=error)


class ConnectionRetry(_RepeatableOnly, ConnectionErrorRetryHandler):
    """slack-sdk's connection-error retries, for repeatable calls only."""


class ServerErrorRetry(_RepeatableOnly, ServerErrorRetryHandler):
    """slack-sdk's 5xx retries, for repeatable calls only."""


def make_web_client(
    token: str, base_url: str, *, rate_limit_retries: int = 0, timeout: int = 10
) -> WebClient:
    """A WebClient pointed at ``base_url`` with retries for connection and server errors of
    the calls that are safe to repeat (never a post: see ``NOT_REPEATABLE``).

    ``rate_limit_retries`` > 0 makes the client sleep Retry-After itself; keep it 0 where the
    caller must not block (listener threads, the outbox worker that reschedules instead). A
    429 means Slack refused the call, so repeating it is safe for every method.
    """
    handlers: list[RetryHandler] = [
        ConnectionRetry(max_retry_count=2),
        ServerErrorRetry(max_retry_count=2),
    ]
    if rate_limit_retries:
        handlers.append(RateLimitErrorRetryHandler(max_retry_count=rate_limit_retries))
    return WebClient(token=token, base_url=base_url, timeout=timeout, retry_handlers=handlers)
