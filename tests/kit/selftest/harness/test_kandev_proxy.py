"""The fault proxy's own behaviour in front of the real Kandev: a WebSocket upgrade is tunnelled
(Kandev's /ws answers through it), and ``slow_path`` holds only the requests of its path, until
``heal()``; an answer call records whose token made it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from websockets.sync.client import connect

from tests.kit.harness import (
    Cast,
    KandevProxy,
    KandevServer,
    Seeder,
    bearer_of,
    sample_questions,
)


@pytest.fixture
def proxy(kandev: KandevServer) -> Iterator[KandevProxy]:
    kandev.start()  # a no-op unless an earlier test left the shared server stopped
    started = KandevProxy(kandev.base_url).start()
    yield started
    started.close()


def test_a_websocket_is_tunnelled_to_kandev(proxy: KandevProxy) -> None:
    url = proxy.base_url.replace("http", "ws", 1) + "/ws"
    with connect(url, open_timeout=10) as socket:
        frame = {"id": "s-1", "type": "request", "action": "user.subscribe", "payload": {}}
        socket.send(json.dumps(frame))
        reply: dict = {}
        while reply.get("id") != "s-1":  # notifications may come first
            reply = json.loads(socket.recv(timeout=10))
    assert reply["payload"]["success"] is True, reply
    assert proxy.tunnels == 1


def test_slow_path_holds_its_path_only_until_healed(proxy: KandevProxy) -> None:
    proxy.slow_path(r"^/api/v1/workspaces$", 60.0)
    answered: list[int] = []
    held = threading.Thread(
        target=lambda: answered.append(
            httpx.get(f"{proxy.base_url}/api/v1/workspaces", timeout=30).status_code
        )
    )
    held.start()
    deadline = time.monotonic() + 10
    while not proxy.slowed:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    other = httpx.get(f"{proxy.base_url}/health", timeout=10)  # another path: not held
    assert other.status_code == 200 and answered == [] and proxy.slowed_answered == 0
    proxy.heal()
    held.join(timeout=10)
    assert answered == [200] and proxy.slowed_answered == 1


def test_an_answer_call_records_whose_token_made_it_by_its_prefix_only(
    kandev_people: Cast, people_seed: Seeder
) -> None:
    cast = kandev_people
    bundle = people_seed(sample_questions(1), title="Proxy: whose token")
    proxy = KandevProxy(cast.server.base_url).start()
    try:
        as_ana = httpx.post(
            f"{proxy.base_url}/api/v1/clarification/{bundle.pending_id}/respond",
            json={"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]},
            headers={"Authorization": f"Bearer {cast.ana.token}"},
            timeout=30,
        )
        assert as_ana.status_code == 200, as_ana.text
        [call] = proxy.answer_calls(bundle.pending_id)
    finally:
        proxy.close()
    assert call.bearer == bearer_of(cast.ana.token) == cast.ana.token[:19]
    assert cast.ana.token not in repr(call)
    assert bearer_of(None) == "" and bearer_of("not-a-pat") == "other"
