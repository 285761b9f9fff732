"""Contract: nothing listening is KandevUnavailable (after bounded retries), never a hang."""

import socket
import time

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevUnavailable


@pytest.fixture
def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_every_call_raises_kandev_unavailable(dead_url):
    with KandevClient(dead_url, retry_attempts=3, retry_max_wait=0.05) as client:
        started = time.monotonic()
        with pytest.raises(KandevUnavailable, match="3 attempt"):
            client.list_pending()
        with pytest.raises(KandevUnavailable):
            client.answer("p", [Answer(question_id="q1", selected_options=["q1_opt1"])])
        with pytest.raises(KandevUnavailable):
            client.reject("p", transport="mcp")
        with pytest.raises(KandevUnavailable):
            client.final_state("t", "p")
        with pytest.raises(KandevUnavailable):
            client.workspaces()
        assert time.monotonic() - started < 10
        result = client.probe()
    assert not result.reachable and not result.ok and "unavailable" in result.detail
