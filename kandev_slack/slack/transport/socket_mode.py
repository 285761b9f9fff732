"""Socket Mode: every envelope is acknowledged, even one Bolt cannot digest, and every error is
logged under its real origin.

Bolt's Socket Mode adapter acks only a 200 result; a payload that breaks Bolt's request parsing
or matching raises (or yields a 400/404) and is left unacknowledged, so Slack shows the person
an error and redelivers the same broken envelope. Here such an envelope is acknowledged with an
empty body: nothing else happens, and nothing is redelivered. What raised is told apart:

- an exception raised in the bot's own code is a bot failure (an error, with its traceback);
- an envelope Bolt cannot make a request of, or whose shape Bolt's own payload reading chokes
  on (a ``view`` without ``type``, a null ``view``), is malformed input (one warning, no
  traceback), as over HTTP;
- Bolt or slack_sdk failing on a well-formed envelope is a library error, named as such.

The links are kept by :class:`kandev_slack.slack.transport.socket_link.SocketLinks` (which logs
under slack_sdk's
logger name, not the bot's); the envelope becomes a Bolt request and the response an envelope
ack here, as Bolt's Socket Mode adapter does (only Bolt's public API: ``App.dispatch``).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk import WebClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from kandev_slack.ops.health import Health
from kandev_slack.slack.transport.acks import answer
from kandev_slack.slack.transport.guard import bolt_misread, raised_in, raised_in_bot
from kandev_slack.slack.transport.socket_link import SocketLinks

log = logging.getLogger(__name__)

#: Where slack_sdk's WebSocket client logs (connections, pings, its own failures).
CLIENT_LOGGER = "slack_sdk.socket_mode"


def envelope_problem(payload: Any) -> str | None:
    """Why Bolt cannot make a request of this envelope's payload (None: it can)."""
    if not isinstance(payload, dict):
        return f"the payload is a {type(payload).__name__}, not an object"
    try:
        BoltRequest(mode="socket_mode", body=payload)
    except Exception as exc:  # Bolt's context extraction indexes into any shape
        return f"Bolt cannot read it ({type(exc).__name__} in {raised_in(exc)})"
    return None


def log_failure(req: SocketModeRequest, error: Exception) -> None:
    """Log ``error``, raised while Bolt handled ``req``, under its real origin."""
    if raised_in_bot(error):
        log.error("a Socket Mode %s envelope failed in the bot", req.type, exc_info=error)
        return
    problem = envelope_problem(req.payload) or bolt_misread(error)
    if problem is not None:
        log.warning("refused a malformed Socket Mode %s envelope: %s", req.type, problem)
        return
    log.error(
        "%s failed on a well-formed Socket Mode %s envelope (a library error, not the bot's)",
        raised_in(error),
        req.type,
        exc_info=error,
    )


def retry_headers(req: SocketModeRequest) -> dict[str, str | Sequence[str]] | None:
    """Slack's retry headers of a redelivered envelope, as it sends them over HTTP."""
    headers: dict[str, str | Sequence[str]] = {}
    if req.retry_attempt is not None:
        headers["x-slack-retry-num"] = str(req.retry_attempt)
    if req.retry_reason is not None:
        headers["x-slack-retry-reason"] = req.retry_reason
    return headers or None


def envelope_ack(envelope_id: str, response: BoltResponse) -> SocketModeResponse:
    """The ack of an envelope carrying Bolt's 200 response: nothing for an empty body, the JSON
    of a JSON body (a response_action, a listing), else the text."""
    if not response.body:
        return SocketModeResponse(envelope_id=envelope_id)
    content_type = response.headers.get("content-type", [""])[0]
    if content_type.startswith("application/json"):
        return SocketModeResponse(envelope_id=envelope_id, payload=json.loads(response.body))
    return SocketModeResponse(envelope_id=envelope_id, payload={"text": response.body})


class Acker(Protocol):
    """Where an envelope's ack is sent (the link it came on)."""

    def send_socket_mode_response(self, response: SocketModeResponse) -> None: ...


class GuardedSocketModeHandler:
    """Bolt over :class:`SocketLinks`: every envelope dispatched to ``app`` and acknowledged."""

    def __init__(
        self,
        app: App,
        app_token: str | None = None,
        *,
        health: Health | None = None,
        web_client: WebClient | None = None,
        concurrency: int = 10,
    ) -> None:
        self.app = app
        self.client = SocketLinks(
            app_token or "",
            web_client or app.client,
            health or Health(),
            workers=concurrency,
            logger=logging.getLogger(CLIENT_LOGGER),
        )
        self.client.socket_mode_request_listeners.append(self.handle)

    def connect(self) -> None:
        self.client.connect()

    def close(self) -> None:
        self.client.close()

    def handle(self, client: Acker, req: SocketModeRequest) -> None:
        acked = threading.Event()

        def respond(response: BoltResponse) -> None:
            if response.status != 200:
                log.warning(
                    "acknowledged a %s envelope Bolt refused (%s)", req.type, response.status
                )
                client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            else:
                client.send_socket_mode_response(envelope_ack(req.envelope_id, response))
            acked.set()

        try:
            # Made here, not in a helper of ours: a payload Bolt cannot read must fail in
            # Bolt's frames alone (log_failure tells the origin from the traceback).
            request = BoltRequest(mode="socket_mode", body=req.payload, headers=retry_headers(req))
            # Acknowledged the moment the listener acks, from its own (this) thread.
            answer(self.app, request, respond)
        except Exception as exc:
            log_failure(req, exc)  # its one line says why: acknowledged with nothing more
            if not acked.is_set():
                client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
