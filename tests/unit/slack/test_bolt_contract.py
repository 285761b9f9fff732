"""What the bot relies on in Bolt's public API (kandev_slack/slack/transport/acks.py, ack_timing.py,
socket_mode.py): a Bolt upgrade that changes any of it fails here, not in production.

No private attribute or module is used; these are behaviours of public API that the docs
describe loosely, pinned exactly."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_bolt import Ack, App, BoltRequest, BoltResponse
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler

from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.slack_api.web_client import make_web_client
from tests.unit.slack.slack_bodies import command, event


@pytest.fixture
def new_app(fake_slack: FakeSlack) -> Callable[..., App]:
    """A plain Bolt App on the fake Slack (its authorization calls auth.test there)."""

    def make(**kwargs: Any) -> App:
        client = make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url)
        return App(client=client, request_verification_enabled=False, **kwargs)

    return make


class CountingAck(Ack):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> BoltResponse:
        self.calls += 1
        return super().__call__(*args, **kwargs)


def _request(body: dict[str, Any], ack: Ack) -> BoltRequest:
    request = BoltRequest(body=body, mode="socket_mode")
    request.context["ack"] = ack
    return request


def test_the_ack_put_in_the_context_before_dispatch_is_the_listeners(
    new_app: Callable[..., App],
) -> None:
    app = new_app(process_before_response=True)
    given: list[object] = []

    @app.command("/kandev-questions")
    def handle(ack: Ack) -> None:
        given.append(ack)
        ack(text="the list")

    ours = CountingAck()
    response = app.dispatch(_request(command(), ours))

    assert given == [ours] and ours.calls == 1
    assert (response.status, response.body) == (200, "the list")


def test_process_before_response_runs_the_listener_in_the_dispatching_thread(
    new_app: Callable[..., App],
) -> None:
    app = new_app(process_before_response=True)
    threads: list[threading.Thread] = []

    @app.command("/kandev-questions")
    def handle(ack: Ack) -> None:
        threads.append(threading.current_thread())
        ack()

    app.dispatch(_request(command(), CountingAck()))
    assert threads == [threading.current_thread()]


def test_a_listener_failing_before_its_ack_makes_dispatch_answer_500(
    new_app: Callable[..., App],
) -> None:
    app = new_app(process_before_response=True)

    @app.command("/kandev-questions")
    def handle(ack: Ack) -> None:
        raise RuntimeError("boom")

    ours = CountingAck()
    assert app.dispatch(_request(command(), ours)).status == 500
    assert ours.calls == 0


def test_an_event_acked_by_a_global_middleware_is_not_acked_again(
    new_app: Callable[..., App],
) -> None:
    app = new_app(process_before_response=True)
    ran: list[str] = []

    @app.middleware
    def ack_first(req: BoltRequest, next: Any) -> None:  # noqa: A002 - Bolt's name
        req.context.ack()
        next()

    @app.event("app_home_opened")
    def handle() -> None:
        ran.append("listener")

    ours = CountingAck()
    body = event({"type": "app_home_opened", "user": "U1", "tab": "home"})
    assert app.dispatch(_request(body, ours)).status == 200
    assert ran == ["listener"] and ours.calls == 1


def test_ack_returns_the_response_it_records() -> None:
    ack = Ack()
    response = ack(text="done")
    assert ack.response is response and response.status == 200


class RecordingApp(App):
    def __init__(self) -> None:
        super().__init__(
            token="xoxb-test",
            signing_secret="unused",
            token_verification_enabled=False,
            request_verification_enabled=False,
        )
        self.dispatched: list[BoltRequest] = []

    def dispatch(self, req: BoltRequest) -> BoltResponse:
        self.dispatched.append(req)
        return BoltResponse(status=200, body="from the override")


def test_the_wsgi_adapter_dispatches_through_the_apps_dispatch_method() -> None:
    app = RecordingApp()
    body = urlencode({"command": "/kandev-questions", "text": ""}).encode()
    environ = {
        "REQUEST_METHOD": "POST",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "PATH_INFO": "/slack/events",
        "QUERY_STRING": "",
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    statuses: list[str] = []
    answer = SlackRequestHandler(app, path="/slack/events")(
        environ, lambda status, headers: statuses.append(status)
    )
    assert statuses == ["200 OK"] and b"".join(answer) == b"from the override"
    assert len(app.dispatched) == 1


def test_the_socket_mode_handler_listens_with_its_handle_method(
    new_app: Callable[..., App],
) -> None:
    class Handler(SocketModeHandler):
        def handle(self, client: Any, req: Any) -> None:  # type: ignore[override]
            pass

    handler = Handler(new_app(), app_token="xapp-test")
    assert handler.client.socket_mode_request_listeners == [handler.handle]
