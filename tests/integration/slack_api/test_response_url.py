"""SlackGateway.respond on a real socket: a response_url that never answers is given up soon
(the listing and every other reply then fall back to chat.postEphemeral), not after 10 s."""

from __future__ import annotations

import socket
import time

import pytest

from kandev_slack.slack_api.errors import SlackError
from kandev_slack.slack_api.gateway import RESPONSE_URL_TIMEOUT_S, SlackGateway
from kandev_slack.slack_api.web_client import make_web_client


def test_a_response_url_that_never_answers_is_given_up_within_seconds() -> None:
    gateway = SlackGateway(make_web_client("xoxb-unused", "http://127.0.0.1:9/api/"))
    with socket.create_server(("127.0.0.1", 0)) as black_hole:  # accepts, never answers
        url = f"http://127.0.0.1:{black_hole.getsockname()[1]}/commands/T1/1/x"
        started = time.monotonic()
        with pytest.raises(SlackError):
            gateway.respond(url, "a listing")
        took = time.monotonic() - started
    assert RESPONSE_URL_TIMEOUT_S <= 3.0
    assert took < 6.0, took  # it waited 10 s
