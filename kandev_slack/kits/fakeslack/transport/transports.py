"""How the driver reaches the bot: signed HTTP requests, or envelopes over Socket Mode."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import urlencode

import httpx

from kandev_slack.kits.fakeslack.transport.signing import SignatureMode, signed_headers
from kandev_slack.kits.fakeslack.transport.socket_mode import FakeSocketModeServer

JsonDict = dict[str, Any]
Kind = Literal["interactive", "slash_commands", "events_api"]
FORM = "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class Ack:
    """The bot's answer to one request: HTTP status (200 for a Socket Mode ack), its body
    (parsed JSON, text, or None when empty) and how long it took."""

    status: int
    body: JsonDict | str | None
    elapsed: float
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def json(self) -> JsonDict | None:
        return self.body if isinstance(self.body, dict) else None

    @property
    def ok(self) -> bool:
        return self.status == 200


@dataclass(frozen=True)
class Delivery:
    """Per-request options: signature mode (HTTP), Slack's retry headers / retry_attempt."""

    signature: SignatureMode = "valid"
    retry_num: int | None = None
    retry_reason: str | None = None
    timeout: float = 10.0


class Transport(Protocol):
    def deliver(
        self, kind: Kind, payload: JsonDict, *, accepts_response_payload: bool, delivery: Delivery
    ) -> Ack: ...


def parse_body(response: httpx.Response) -> JsonDict | str | None:
    """An HTTP response body as Slack's clients read it: a JSON object, else text, else None."""
    if not response.content:
        return None
    try:
        decoded = response.json()
    except ValueError:
        return response.text
    return decoded if isinstance(decoded, dict) else response.text


class HttpTransport:
    """POSTs to the bot's request URL, like Slack: events as JSON, interactions as
    `payload=<json>` forms, slash commands as plain forms, all signed."""

    def __init__(self, url: str, signing_secret: str) -> None:
        self.url = url
        self.signing_secret = signing_secret

    def deliver(
        self, kind: Kind, payload: JsonDict, *, accepts_response_payload: bool, delivery: Delivery
    ) -> Ack:
        if kind == "interactive":
            body, content_type = urlencode({"payload": json.dumps(payload)}).encode(), FORM
        elif kind == "slash_commands":
            body, content_type = urlencode(payload).encode(), FORM
        else:
            body, content_type = json.dumps(payload).encode(), "application/json"
        return self.post(body, content_type, delivery)

    def post(self, body: bytes, content_type: str, delivery: Delivery = Delivery()) -> Ack:
        """Send raw bytes (for hand-made or tampered requests)."""
        headers = {
            "Content-Type": content_type,
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            **signed_headers(self.signing_secret, body, delivery.signature),
        }
        if delivery.retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(delivery.retry_num)
            headers["X-Slack-Retry-Reason"] = delivery.retry_reason or "http_timeout"
        started = time.monotonic()
        response = httpx.post(self.url, content=body, headers=headers, timeout=delivery.timeout)
        elapsed = time.monotonic() - started
        return Ack(response.status_code, parse_body(response), elapsed, dict(response.headers))


class SocketModeTransport:
    """Sends envelopes through the fake Socket Mode server and waits for the ack."""

    def __init__(self, server: FakeSocketModeServer) -> None:
        self.server = server

    def deliver(
        self, kind: Kind, payload: JsonDict, *, accepts_response_payload: bool, delivery: Delivery
    ) -> Ack:
        ack = self.server.send_envelope(
            kind,
            payload,
            accepts_response_payload=accepts_response_payload,
            retry_attempt=delivery.retry_num,
            retry_reason=delivery.retry_reason,
            timeout=delivery.timeout,
        )
        return Ack(200, ack.payload, ack.elapsed)
