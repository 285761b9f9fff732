"""The fake Socket Mode server's misbehaviours, seen by a bare WebSocket client."""

from __future__ import annotations

import json

import pytest
from slack_sdk import WebClient
from websockets.sync.client import ClientConnection, connect

from kandev_slack.kits.fakeslack import FakeSlack


def _link(fake: FakeSlack) -> ClientConnection:
    client = WebClient(base_url=fake.api_url)
    url = client.apps_connections_open(app_token=fake.workspace.app_token)["url"]
    return connect(url, ping_interval=None, compression=None)


def test_a_link_that_never_says_hello(fake_slack: FakeSlack) -> None:
    fake_slack.socket.greet = False
    with _link(fake_slack) as conn:
        fake_slack.socket.wait_for("accepted", 1, 5)
        with pytest.raises(TimeoutError):
            conn.recv(timeout=1.0)
        assert fake_slack.socket.connections_opened == 0


def test_a_silenced_link_answers_no_ping_and_stays_open(fake_slack: FakeSlack) -> None:
    fake_slack.socket.relayed = True
    with _link(fake_slack) as conn:
        assert json.loads(conn.recv(timeout=5))["type"] == "hello"
        assert conn.ping().wait(5)
        fake_slack.socket.silence_links()
        assert not conn.ping().wait(2)
        with pytest.raises(TimeoutError):  # nothing closed: the link just went quiet
            conn.recv(timeout=0.5)


#: How long a frame may take to arrive on a loaded machine (a bound, not a measure).
WAIT_S = 20.0


def test_raw_text_frames_and_a_chosen_link(fake_slack: FakeSlack) -> None:
    with _link(fake_slack) as old, _link(fake_slack) as new:
        for conn in (old, new):
            assert json.loads(conn.recv(timeout=WAIT_S))["type"] == "hello"
        fake_slack.socket.wait_for("open", 2, WAIT_S)
        fake_slack.socket.send_raw(b'{"type": "\xff"}', link=0)
        assert old.recv(timeout=WAIT_S, decode=False) == b'{"type": "\xff"}'
        eid = fake_slack.socket.deliver("interactive", {"type": "block_actions"}, link=0)
        assert json.loads(old.recv(timeout=WAIT_S))["envelope_id"] == eid
        with pytest.raises(TimeoutError):
            new.recv(timeout=0.5)
