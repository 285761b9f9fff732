"""The slack-sdk WebClient the bot calls Slack through: its connections kept open between
calls, retries for connection and server errors of the calls that are safe to repeat, never of a
post."""

from __future__ import annotations

import io
from typing import Any
from urllib.error import HTTPError
from urllib.parse import urlsplit
from urllib.request import Request

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

from kandev_slack.slack_api.connections import KeptConnections

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


class KeptWebClient(WebClient):
    """slack-sdk's WebClient, each call sent over a connection kept open for the next
    (:class:`KeptConnections`) instead of a new one per call.

    It replaces one step of slack-sdk's: sending the request it built and reading the reply
    (``_perform_urllib_http_request_internal``). Everything around it is slack-sdk's own:
    building the request, the retry handlers, turning the reply into a ``SlackResponse`` or a
    ``SlackApiError``. The reply is handed back as ``urlopen``'s would be: a status outside
    2xx raises ``HTTPError`` (a 429 with its Retry-After), errors as ``urlopen`` raises them
    (see connections.py). With a proxy, slack-sdk's own step sends it.
    """

    def __init__(self, *args: Any, connections: KeptConnections | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.connections = connections or KeptConnections()

    def _perform_urllib_http_request_internal(self, url: str, req: Request) -> dict[str, Any]:
        data = req.data
        if self.proxy is not None or not url.lower().startswith("http"):
            return super()._perform_urllib_http_request_internal(url, req)
        if data is not None and not isinstance(data, bytes):  # slack-sdk sends bytes
            return super()._perform_urllib_http_request_internal(url, req)
        reply = self.connections.send(
            req.get_method(),
            url,
            data,
            dict(req.header_items()),
            timeout=self.timeout,
            context=self.ssl,
        )
        if not 200 <= reply.status < 300:
            raise HTTPError(url, reply.status, reply.reason, reply.headers, io.BytesIO(reply.body))
        if reply.headers.get_content_type() == "application/gzip":  # admin.analytics.getFile
            return {"status": reply.status, "headers": reply.headers, "body": reply.body}
        body = reply.body.decode(reply.headers.get_content_charset() or "utf-8")
        return {"status": reply.status, "headers": reply.headers, "body": body}


def make_web_client(
    token: str, base_url: str, *, rate_limit_retries: int = 0, timeout: int = 10
) -> WebClient:
    """A WebClient pointed at ``base_url``, keeping its connections (:class:`KeptWebClient`),
    with retries for connection and server errors of
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
    return KeptWebClient(token=token, base_url=base_url, timeout=timeout, retry_handlers=handlers)
