"""SocketLinks (kandev_slack/slack/transport/socket_link.py) in this process against the fake's
Socket Mode server:
real sockets, real timing, no Kandev."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.socket_mode.response import SocketModeResponse

from kandev_slack.kits.fakeslack import FakeSlack, NoAck
from kandev_slack.ops.health import Health
from kandev_slack.slack.transport.socket_link import COMPONENT, MAX_FRAME_BYTES, SocketLinks
from tests.kit.polling import eventually

ENVELOPE = {"type": "block_actions", "actions": []}


def _slack_problem(health: Health) -> str | None:
    return next((r for r in health.report().reasons if r.startswith(COMPONENT)), None)


@pytest.fixture
def health() -> Health:
    return Health()


@pytest.fixture
def links(fake_slack: FakeSlack, health: Health) -> Iterator[SocketLinks]:
    client = SocketLinks(
        fake_slack.workspace.app_token, WebClient(base_url=fake_slack.api_url), health, workers=2
    )

    def ack(reply, request) -> None:
        reply.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))

    client.socket_mode_request_listeners.append(ack)
    yield client
    client.close()


def test_health_names_slack_until_the_first_link_is_greeted(
    links: SocketLinks, fake_slack: FakeSlack, health: Health
) -> None:
    assert _slack_problem(health) == "slack: Socket Mode is not connected yet"
    links.connect()
    fake_slack.socket.wait_for_connection(1, 10)
    assert links.connected.wait(5) and _slack_problem(health) is None
    assert fake_slack.socket.send_envelope("interactive", ENVELOPE).envelope_id


def test_invalid_auth_after_the_first_link_is_retried_not_fatal(
    links: SocketLinks, fake_slack: FakeSlack, health: Health
) -> None:
    links.connect()
    assert links.connected.wait(10)  # greeted: from now on a refusal is retried
    fake_slack.faults.error("apps.connections.open", "invalid_auth", times=2)
    fake_slack.socket.close_connections()
    said = "slack: Socket Mode is not connected: apps.connections.open failed (invalid_auth)"
    deadline = time.monotonic() + 10
    while _slack_problem(health) != said and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _slack_problem(health) == said
    fake_slack.socket.wait_for("connections_opened", 2, 20)  # retried, then connected again
    assert links.refused is None


def test_links_that_die_young_back_off(links: SocketLinks, fake_slack: FakeSlack) -> None:
    links.connect()
    fake_slack.socket.wait_for_connection(1, 10)
    started = time.monotonic()
    for _ in range(5):  # every link is closed as soon as it is up
        opened = fake_slack.socket.connections_opened
        fake_slack.socket.close_connections()
        fake_slack.socket.wait_for("connections_opened", opened + 1, 30)
    # backoff 0.5, 1, 2, 4 s (±20 %) before the later ones: no reconnect storm
    assert time.monotonic() - started > 4.0


def test_a_rate_limited_open_waits_for_retry_after(
    links: SocketLinks, fake_slack: FakeSlack
) -> None:
    links.connect()
    fake_slack.socket.wait_for_connection(1, 10)
    fake_slack.faults.rate_limit("apps.connections.open", retry_after=3, times=1)
    fake_slack.socket.close_connections()
    fake_slack.socket.wait_for("connections_opened", 2, 20)
    limited, retried = fake_slack.calls("apps.connections.open")[1:3]
    assert limited.status == 429 and retried.ok
    assert retried.at - limited.at >= 2.5  # Slack's Retry-After, not the 0.5 s backoff


def test_a_plain_ws_url_to_another_host_is_not_followed(
    links: SocketLinks, fake_slack: FakeSlack, health: Health
) -> None:
    fake_slack.socket.url_host = "localhost"  # the same server, but not SLACK_API_URL's host
    links.connect()
    said = (
        "slack: Socket Mode is not connected: apps.connections.open gave a URL not followed "
        "(plain ws:// to a host other than SLACK_API_URL's)"
    )
    deadline = time.monotonic() + 10
    while _slack_problem(health) != said and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _slack_problem(health) == said
    while len(fake_slack.calls("apps.connections.open")) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(fake_slack.calls("apps.connections.open")) >= 2  # asked again, with backoff
    assert fake_slack.socket.accepted == 0 and not links.connected.is_set()
    fake_slack.socket.url_host = None  # a URL it may follow: connected
    assert links.connected.wait(15)


def test_a_frame_over_the_limit_closes_the_link_and_is_not_dispatched(
    links: SocketLinks, fake_slack: FakeSlack
) -> None:
    dispatched: list[str] = []
    links.socket_mode_request_listeners.append(
        lambda _reply, request: dispatched.append(request.envelope_id)
    )
    links.connect()
    fake_slack.socket.wait_for_connection(1, 10)
    assert links.connected.wait(5)
    big = {**ENVELOPE, "padding": "x" * (MAX_FRAME_BYTES + 1)}
    with pytest.raises(NoAck):
        fake_slack.socket.send_envelope("interactive", big, timeout=3)
    fake_slack.socket.wait_for("connections_opened", 2, 20)  # replaced
    assert dispatched == []
    ack = fake_slack.socket.send_envelope("interactive", ENVELOPE, timeout=5)
    # The ack may come back before the listener has run (its own thread): wait for it.
    assert eventually(lambda: dispatched or None, timeout=5) == [ack.envelope_id]
