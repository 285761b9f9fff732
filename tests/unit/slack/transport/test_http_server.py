"""The HTTP front: a signed request's body is parsed once on its way to Bolt's listener, and its
response leaves at the ack, while the listener goes on in the request's thread."""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
import slack_bolt.request.request as bolt_request_module
from slack_bolt import App
from slack_bolt.authorization import AuthorizeResult

from kandev_slack.kits.fakeslack import signed_headers
from kandev_slack.ops.health import Health
from kandev_slack.ops.logs import ContextExecutor
from kandev_slack.slack.transport.acks import PromptAckApp
from kandev_slack.slack.transport.http_server import (
    EVENTS_PATH,
    make_wsgi_app,
    serve,
    stop_server,
)
from tests.kit.wsgi import post

SECRET = "fake-signing-secret-0123456789abcdef"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every body Bolt parses into a request (its ``parse_body``), counted."""
    seen: list[str] = []
    real = bolt_request_module.parse_body

    def counting(body: str, content_type: str | None) -> dict[str, Any]:
        seen.append(body)
        return real(body, content_type)

    monkeypatch.setattr(bolt_request_module, "parse_body", counting)
    return seen


def _authorize(**_: Any) -> AuthorizeResult:  # no auth.test: Slack is not reachable here
    return AuthorizeResult(
        enterprise_id=None, team_id="T0TEAM0001", bot_token="xoxb-0000-test", bot_id="B0"
    )


def _bolt(clicks: list[dict[str, Any]]) -> App:
    app = App(signing_secret=SECRET, authorize=_authorize, process_before_response=True)

    @app.action("choose")
    def choose(ack, body) -> None:
        ack()
        clicks.append(body)

    return app


def _post(wsgi, body: bytes, headers: dict[str, str]) -> tuple[str, bytes]:
    return post(wsgi, EVENTS_PATH, body, headers)


CLICK = {
    "type": "block_actions",
    "user": {"id": "U0ALICE001", "team_id": "T0TEAM0001"},
    "team": {"id": "T0TEAM0001"},
    "actions": [{"action_id": "choose", "value": "option 1", "type": "button"}],
    "message": {"blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "Which?"}}]},
}


@pytest.mark.parametrize("guarded", [True, False], ids=["signed, guarded", "unguarded"])
def test_a_click_is_parsed_once_and_reaches_its_listener(parses: list[str], guarded: bool) -> None:
    clicks: list[dict[str, Any]] = []
    wsgi = make_wsgi_app(_bolt(clicks), Health(), signing_secret=SECRET if guarded else None)
    body = urlencode({"payload": json.dumps(CLICK)}).encode()

    status, _ = _post(wsgi, body, signed_headers(SECRET, body))

    assert status.startswith("200")
    assert [c["actions"][0]["value"] for c in clicks] == ["option 1"]
    assert parses == [body.decode()]


def test_a_forged_click_is_refused_before_any_parse(parses: list[str]) -> None:
    clicks: list[dict[str, Any]] = []
    wsgi = make_wsgi_app(_bolt(clicks), Health(), signing_secret=SECRET)
    body = urlencode({"payload": json.dumps(CLICK)}).encode()

    status, _ = _post(wsgi, body, signed_headers("another-secret-0123456789abcdef", body))

    assert status.startswith("401")
    assert clicks == [] and parses == []


@pytest.mark.parametrize("guarded", [True, False], ids=["signed, guarded", "unguarded"])
def test_the_prompt_app_answers_through_the_handler(guarded: bool) -> None:
    app = PromptAckApp(executor=ContextExecutor(2), signing_secret=SECRET, authorize=_authorize)

    @app.action("choose")
    def choose(ack) -> None:
        ack(text="taken")

    wsgi = make_wsgi_app(app, Health(), signing_secret=SECRET if guarded else None)
    body = urlencode({"payload": json.dumps(CLICK)}).encode()

    assert _post(wsgi, body, signed_headers(SECRET, body)) == ("200 OK", b"taken")


def test_the_response_is_complete_at_the_ack_while_the_listener_goes_on() -> None:
    """Over a real waitress server: the client has the whole response (its Content-Length
    met) while the listener, in the request's own thread, is still running after its ack."""
    app = PromptAckApp(executor=ContextExecutor(2), signing_secret=SECRET, authorize=_authorize)
    may_end, ended = threading.Event(), threading.Event()
    threads: list[str] = []

    @app.action("choose")
    def choose(ack) -> None:
        ack()
        threads.append(threading.current_thread().name)
        may_end.wait(10)
        ended.set()

    server = serve(make_wsgi_app(app, Health(), signing_secret=SECRET), 0, "127.0.0.1")
    running = threading.Thread(target=server.run, daemon=True)
    running.start()
    try:
        body = urlencode({"payload": json.dumps(CLICK)}).encode()
        headers = {
            **signed_headers(SECRET, body),
            "Content-Type": "application/x-www-form-urlencoded",
        }
        url = f"http://127.0.0.1:{server.effective_port}{EVENTS_PATH}"
        with httpx.Client(timeout=5) as client:
            response = client.post(url, content=body, headers=headers)
            assert response.status_code == 200 and response.content == b""
            assert not ended.is_set()
            may_end.set()
            assert ended.wait(5)
            # the connection serves the next request once the listener has ended
            assert client.post(url, content=body, headers=headers).status_code == 200
    finally:
        may_end.set()
        stop_server(server, running)
    assert [name.startswith("waitress") for name in threads] == [True, True]
