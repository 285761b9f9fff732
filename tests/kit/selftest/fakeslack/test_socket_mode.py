"""The fake Socket Mode server with slack_bolt's real SocketModeHandler."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from websockets.sync.client import connect

from kandev_slack.kits.fakeslack import FakeSlack, NoAck
from tests.kit.selftest.fakeslack.demo_app import build_app, socket_mode


@pytest.fixture
def app(fake_slack: FakeSlack) -> App:
    return build_app(fake_slack)


def test_hello_then_envelope_ack(app: App, fake_slack: FakeSlack) -> None:
    with socket_mode(app, fake_slack):
        assert fake_slack.socket.sent[0]["type"] == "hello"
        assert fake_slack.socket.sent[0]["connection_info"]["app_id"] == "A0FAKEAPP1"
        ack = fake_slack.socket.send_envelope(
            "slash_commands",
            {
                "command": "/kq",
                "text": "db",
                "user_id": "U0ALICE001",
                "channel_id": "C0QUESTION",
                "team_id": "T0FAKETEAM",
                "trigger_id": fake_slack.issue_trigger("U0ALICE001"),
                "response_url": fake_slack.issue_response_url("C0QUESTION", "U0ALICE001"),
            },
            accepts_response_payload=True,
        )
        assert ack.payload == {"text": "you asked for 'db'"}
        assert ack.elapsed < 3.0
    opened = fake_slack.calls("apps.connections.open")
    assert len(opened) == 1 and opened[0].token == fake_slack.workspace.app_token


def test_bot_token_cannot_open_a_connection(fake_slack: FakeSlack) -> None:
    client = WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)
    with pytest.raises(SlackApiError) as exc:
        client.apps_connections_open(app_token=fake_slack.workspace.bot_token)
    assert exc.value.response["error"] == "not_allowed_token_type"


def test_disconnect_message_and_dropped_connection_reconnect(
    app: App, fake_slack: FakeSlack
) -> None:
    server = fake_slack.socket
    with socket_mode(app, fake_slack):
        server.send_disconnect("refresh_requested")
        server.wait_for_connection(opened=2, timeout=10)
        server.drop_connections()
        server.wait_for_connection(opened=3, timeout=20)
        event = {"type": "app_home_opened", "user": "U0ALICE001", "tab": "home", "channel": "D1"}
        ack = server.send_envelope("events_api", {"type": "event_callback", "event": event})
        assert ack.payload is None
        fake_slack.wait_for_call("views.publish", timeout=5)
    assert len(fake_slack.calls("apps.connections.open")) >= 3


def test_unacknowledged_envelope_times_out(fake_slack: FakeSlack) -> None:
    with pytest.raises(TimeoutError):
        fake_slack.socket.send_envelope("events_api", {}, timeout=0.2)
    assert issubclass(NoAck, TimeoutError)


def test_issued_urls_can_name_another_host_of_the_same_server(fake_slack: FakeSlack) -> None:
    client = WebClient(token=fake_slack.workspace.app_token, base_url=fake_slack.api_url)
    url = client.apps_connections_open(app_token=fake_slack.workspace.app_token)["url"]
    assert url.startswith(f"ws://127.0.0.1:{fake_slack.socket.port}/link/?ticket=")
    fake_slack.socket.url_host = "localhost"
    url = client.apps_connections_open(app_token=fake_slack.workspace.app_token)["url"]
    assert url.startswith(f"ws://localhost:{fake_slack.socket.port}/link/?ticket=")


def test_concurrent_envelopes_each_get_their_own_ack_timed_from_its_send(
    fake_slack: FakeSlack,
) -> None:
    """A crowd's envelopes on one link: each waiter gets the ack of its own envelope (acked
    here in reverse order, one left unacked), timed from when its frame went out."""
    client = WebClient(token=fake_slack.workspace.app_token, base_url=fake_slack.api_url)
    url = client.apps_connections_open(app_token=fake_slack.workspace.app_token)["url"]
    hold_s, count = 0.3, 12
    with connect(url) as link:
        assert json.loads(link.recv(timeout=5))["type"] == "hello"
        with ThreadPoolExecutor(count) as pool:
            acks = [
                pool.submit(
                    fake_slack.socket.send_envelope,
                    "interactive",
                    {"n": n},
                    accepts_response_payload=True,
                    timeout=5.0 if n else 1.0,
                )
                for n in range(count)
            ]
            envelopes = [json.loads(link.recv(timeout=5)) for _ in range(count)]
            time.sleep(hold_s)
            for envelope in sorted(envelopes, key=lambda e: -e["payload"]["n"]):
                if envelope["payload"]["n"]:  # the first is never acked
                    reply = {"envelope_id": envelope["envelope_id"], "payload": envelope["payload"]}
                    link.send(json.dumps(reply))
            with pytest.raises(NoAck):
                acks[0].result(timeout=10)
            for n, ack in enumerate(acks[1:], start=1):
                got = ack.result(timeout=10)
                assert got.payload == {"n": n}
                assert hold_s <= got.elapsed < 5.0


def test_issued_urls_can_send_the_app_to_another_server(fake_slack: FakeSlack) -> None:
    client = WebClient(token=fake_slack.workspace.app_token, base_url=fake_slack.api_url)
    fake_slack.socket.redirect_url = "ws://127.0.0.1:1/link/"
    assert client.apps_connections_open(app_token=fake_slack.workspace.app_token)["url"] == (
        "ws://127.0.0.1:1/link/"
    )
    fake_slack.socket.redirect_url = None
    url = client.apps_connections_open(app_token=fake_slack.workspace.app_token)["url"]
    assert url.startswith(f"ws://127.0.0.1:{fake_slack.socket.port}/link/?ticket=")
