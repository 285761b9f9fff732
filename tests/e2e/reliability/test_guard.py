"""Guarantee 6, the front door in process: SlackRequestGuard authenticates before anything reads
a request, refuses what Slack never sends, and hands the rest on byte for byte."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import time
from typing import Any
from urllib.parse import urlencode

import pytest

from kandev_slack.kits.fakeslack import signed_headers
from kandev_slack.slack.transport.guard import MAX_BODY_BYTES, SlackRequestGuard
from tests.kit.wsgi import post

SECRET = "fake-signing-secret-0123456789abcdef"
PATH = "/slack/events"


class Downstream:
    """The WSGI app behind the guard (Bolt in production): records what reached it."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def __call__(self, environ: dict[str, Any], start_response) -> list[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        self.bodies.append(environ["wsgi.input"].read(length))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b""]


class Unreadable(io.RawIOBase):
    def read(self, *_args: Any) -> bytes:
        raise AssertionError("the guard read a body it should have refused unread")


def _call(guard: SlackRequestGuard, body: bytes, headers: dict[str, str], **environ: Any):
    return post(guard, PATH, body, headers, **environ)


@pytest.fixture
def app() -> tuple[SlackRequestGuard, Downstream]:
    downstream = Downstream()
    return SlackRequestGuard(downstream, SECRET, path=PATH), downstream


def _sign(body: bytes) -> dict[str, str]:
    """Slack's v0 signature over raw bytes (also bytes that are not UTF-8)."""
    timestamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256)
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest.hexdigest()}"}


def _interaction(payload: Any) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


def test_a_signed_request_reaches_bolt_unchanged(app) -> None:
    guard, downstream = app
    body = _interaction({"type": "block_actions", "user": {"id": "U1"}, "actions": []})
    status, _ = _call(guard, body, signed_headers(SECRET, body))
    assert status.startswith("200")
    assert downstream.bodies == [body]


@pytest.mark.parametrize("mode", ["forged", "missing", "stale"])
def test_unauthenticated_requests_are_401_and_go_no_further(app, mode) -> None:
    guard, downstream = app
    for body in (_interaction({"type": "block_actions"}), b"payload=%7Bnot json", b""):
        status, out = _call(guard, body, signed_headers(SECRET, body, mode))
        assert status.startswith("401"), (mode, body, status)
        assert json.loads(out)["error"] == "invalid request signature"
    assert downstream.bodies == []


def test_a_timestamp_from_the_future_is_refused_too(app) -> None:
    guard, downstream = app
    body = _interaction({"type": "block_actions"})
    status, _ = _call(guard, body, signed_headers(SECRET, body, now=time.time() + 600))
    assert status.startswith("401") and downstream.bodies == []


def test_an_oversized_body_is_refused_unread(app) -> None:
    guard, downstream = app
    status, _ = _call(
        guard,
        b"",
        {},
        CONTENT_LENGTH=str(MAX_BODY_BYTES + 1),
        **{"wsgi.input": Unreadable()},
    )
    assert status.startswith("413") and downstream.bodies == []


@pytest.mark.parametrize(
    "body",
    [
        b"payload=%7Bnot-json",
        b"payload=%5B1%2C2%5D",
        b"payload=%22text%22",
        _interaction({"type": "block_actions", "user": 5}),
        _interaction({"type": "block_actions", "user": {"id": "U1"}, "channel": 5}),
        b"payload=\xff\xfe",  # not UTF-8
    ],
)
def test_signed_bodies_bolt_cannot_parse_are_400(app, body) -> None:
    guard, downstream = app
    status, out = _call(guard, body, _sign(body))
    assert status.startswith("400"), (body, status)
    assert downstream.bodies == []
    assert json.loads(out)["ok"] is False


def test_other_paths_and_methods_pass_through(app) -> None:
    guard, downstream = app
    status, _ = _call(guard, b"", {}, PATH_INFO="/healthz", REQUEST_METHOD="GET")
    assert status.startswith("200") and downstream.bodies == [b""]


def test_slacks_unsigned_ssl_check_probe_gets_200_and_goes_no_further(app) -> None:
    guard, downstream = app
    body = b"ssl_check=1&token=legacy-verification-token"
    status, out = _call(guard, body, {})
    assert status.startswith("200"), status
    assert out == b"" and downstream.bodies == []


@pytest.mark.parametrize(
    "body", [b"ssl_check=0&token=x", b"ssl_check=1&ssl_check=2", b"payload=%7B%7D&ssl_check=yes"]
)
def test_anything_else_that_mentions_ssl_check_still_needs_a_signature(app, body) -> None:
    guard, downstream = app
    status, _ = _call(guard, body, {})
    assert status.startswith("401"), (body, status)
    assert downstream.bodies == []
