"""The bot's WebClient keeps its connections to Slack (kandev_slack/slack_api/connections.py):
calls reuse one, a connection Slack closed while idle is replaced unseen, and what urlopen
raised before is raised still (the retry handlers decide as they did)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from slack_sdk.errors import SlackApiError

from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.slack_api.connections import MAX_IDLE
from kandev_slack.slack_api.web_client import KeptWebClient, make_web_client

CHANNEL = "C0QUESTION"


@pytest.fixture
def short_idle() -> Iterator[FakeSlack]:
    """A fake Slack that hangs up on a connection idle for 0.2 s."""
    with FakeSlack(http_idle_s=0.2) as fake:
        yield fake


def _client(fake: FakeSlack) -> KeptWebClient:
    client = make_web_client(fake.workspace.bot_token, fake.api_url)
    assert isinstance(client, KeptWebClient)
    return client


def test_calls_share_one_connection(fake_slack: FakeSlack) -> None:
    client = _client(fake_slack)
    before = fake_slack.http_connections
    posted = client.chat_postMessage(channel=CHANNEL, text="one")
    client.chat_update(channel=CHANNEL, ts=posted["ts"], text="two")
    client.auth_test()
    client.conversations_members(channel=CHANNEL)

    assert fake_slack.http_connections - before == 1
    assert client.connections.opened == 1 and client.connections.idle() == 1
    assert [m.text for m in fake_slack.messages(CHANNEL)] == ["two"]


def test_a_connection_slack_closed_while_idle_is_replaced_unseen(short_idle: FakeSlack) -> None:
    client = _client(short_idle)
    client.auth_test()
    time.sleep(0.6)  # the fake hangs up on the idle connection

    assert client.auth_test()["ok"]
    assert client.connections.opened == 2
    assert short_idle.http_connections == 2


def test_a_rate_limit_is_slack_sdk_s_error_and_keeps_the_connection(fake_slack: FakeSlack) -> None:
    client = _client(fake_slack)
    fake_slack.faults.rate_limit("chat.update", retry_after=7)
    posted = client.chat_postMessage(channel=CHANNEL, text="one")

    with pytest.raises(SlackApiError) as raised:
        client.chat_update(channel=CHANNEL, ts=posted["ts"], text="two")

    assert raised.value.response.status_code == 429
    assert raised.value.response.headers["Retry-After"] == "7"
    assert raised.value.response["error"] == "ratelimited"
    client.auth_test()
    assert client.connections.opened == 1


def test_a_dropped_call_is_repeated_only_when_repeating_it_is_safe(fake_slack: FakeSlack) -> None:
    client = _client(fake_slack)
    fake_slack.faults.accept_then_drop("conversations.members")
    fake_slack.faults.accept_then_drop("chat.postMessage")

    assert client.conversations_members(channel=CHANNEL)["ok"]  # repeated on a new connection
    with pytest.raises(Exception) as raised:  # a post is never sent twice by the client
        client.chat_postMessage(channel=CHANNEL, text="once")

    assert type(raised.value).__name__ in ("RemoteDisconnected", "ConnectionResetError")
    assert len(fake_slack.calls("conversations.members")) == 2
    assert [m.text for m in fake_slack.messages(CHANNEL)] == ["once"]
    assert client.auth_test()["ok"]  # and the next call finds a connection that works


def test_a_server_error_is_repeated_over_a_kept_connection(fake_slack: FakeSlack) -> None:
    client = _client(fake_slack)
    fake_slack.faults.server_error("conversations.members", status=503)

    assert client.conversations_members(channel=CHANNEL)["ok"]
    assert len(fake_slack.calls("conversations.members")) == 2
    assert client.connections.opened == 1


def test_threads_calling_at_once_each_get_a_connection_and_some_are_kept(
    fake_slack: FakeSlack,
) -> None:
    client = _client(fake_slack)
    errors: list[BaseException] = []
    start = threading.Barrier(12)

    def calls() -> None:
        try:
            start.wait(5)
            for _ in range(10):
                assert client.auth_test()["ok"]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=calls) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)

    assert errors == []
    assert len(fake_slack.calls("auth.test")) == 120
    assert client.connections.opened <= 120 // 2  # most calls reused one
    assert client.connections.idle() <= MAX_IDLE


def test_a_card_sized_call_on_a_kept_connection_is_not_held_back(fake_slack: FakeSlack) -> None:
    """A body of 2,920 bytes or more goes apart from its headers: with Nagle's algorithm on a
    kept connection it waited for the fake's delayed ACK (~40 ms a call; an e2e test's message
    shortcut outran the card's recorded ts). Both ends send at once (TCP_NODELAY)."""
    import socket

    client = _client(fake_slack)
    text = "x" * 3_500  # a body of a card's size (over 2,920 bytes), under Slack's 4,000
    for _ in range(3):
        client.chat_postMessage(channel=CHANNEL, text=text)
    [conn] = [c for conns in client.connections._idle.values() for c in conns]
    assert conn.sock is not None
    assert conn.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    assert client.connections.opened == 1
