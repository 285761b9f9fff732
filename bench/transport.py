"""Signed requests to the bot over one kept-alive HTTP connection, timed precisely.

The fake Slack's ``HttpTransport`` sends each request with ``httpx.post``, which builds a new
client (an SSL context) first: ~50 ms on a busy machine, inside its timing. This transport signs
and encodes exactly like it but reuses one client, and notes when each request left.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from bench import burst
from kandev_slack.kits.fakeslack import (
    Ack,
    Delivery,
    HttpTransport,
    Kind,
    envelope,
    parse_body,
    signed_headers,
)

JsonDict = dict[str, Any]


class KeepAliveTransport(HttpTransport):
    def __init__(self, url: str, signing_secret: str) -> None:
        super().__init__(url, signing_secret)
        self._client = httpx.Client(timeout=30.0, trust_env=False)
        self.last_sent_at = 0.0  # time.time() when the last request was sent

    def post(self, body: bytes, content_type: str, delivery: Delivery | None = None) -> Ack:
        delivery = delivery or Delivery()
        headers = {
            "Content-Type": content_type,
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            **signed_headers(self.signing_secret, body, delivery.signature),
        }
        self.last_sent_at = time.time()
        started = time.perf_counter()
        response = self._client.post(
            self.url, content=body, headers=headers, timeout=delivery.timeout
        )
        elapsed = time.perf_counter() - started
        return Ack(response.status_code, parse_body(response), elapsed, dict(response.headers))

    def close(self) -> None:
        self._client.close()


class PreparedTransport(HttpTransport):
    """Encodes and signs a request exactly as Slack would, without sending it: it is sent and
    timed from a process of its own (bench/burst.py). Its ack is a stand-in (200, no body)."""

    def __init__(self, url: str, signing_secret: str) -> None:
        super().__init__(url, signing_secret)
        self.request: burst.Request | None = None

    def post(self, body: bytes, content_type: str, delivery: Delivery | None = None) -> Ack:
        headers = {
            "Content-Type": content_type,
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            **signed_headers(self.signing_secret, body),
        }
        self.request = burst.Request(url=self.url, body=body.decode(), headers=headers)
        return Ack(200, None, 0.0, {})


class PreparedEnvelope:
    """Builds a Socket Mode envelope exactly as the fake Slack's server would, without sending
    it: it is sent and timed from a process of its own (bench/socket_burst.py). Its ack is a
    stand-in (200, no body)."""

    def __init__(self) -> None:
        self.envelope: dict[str, Any] | None = None

    def deliver(
        self, kind: Kind, payload: JsonDict, *, accepts_response_payload: bool, delivery: Delivery
    ) -> Ack:
        self.envelope = envelope(kind, payload, accepts_response_payload=accepts_response_payload)
        return Ack(200, None, 0.0, {})
