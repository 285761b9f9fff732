"""The fault proxy's own behaviour in front of the real Kandev: a WebSocket upgrade is tunnelled
(Kandev's /ws answers through it), ``drop_hints`` drops only the notifications it names and
``freeze_path`` answers with Kandev's last reply, until ``heal()``, every request is named in
``requests``; ``slow_path`` holds only the requests of its path, until ``heal()``; an answer call
records whose token made it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

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


def _plain_task(kandev: KandevServer, title: str) -> str:
    """A task without an agent, in the default workspace (deleted by the caller)."""
    workflow = kandev.workflow(kandev.workspace_id)
    body = {
        "workspace_id": kandev.workspace_id,
        "title": title,
        "description": "no agent",
        "start_agent": False,
        "workflow_id": workflow.workflow_id,
        "workflow_step_id": workflow.start_step_id,
    }
    response = kandev.http.post("/tasks", json=body)
    response.raise_for_status()
    return str(response.json()["id"])


def _created(socket: Any, task_id: str, *, until: str) -> list[str]:
    """The actions of the notifications about ``task_id`` received until one is ``until``."""
    actions: list[str] = []
    while until not in actions:
        message = json.loads(socket.recv(timeout=10))
        payload = message.get("payload") or {}
        if task_id in (payload.get("id"), payload.get("task_id")):
            actions.append(str(message.get("action")))
    return actions


def test_dropped_hints_never_reach_the_client_until_healed(
    proxy: KandevProxy, kandev: KandevServer
) -> None:
    url = proxy.base_url.replace("http", "ws", 1) + "/ws"
    tasks: list[str] = []
    try:
        with connect(url, open_timeout=10) as socket:
            socket.send(json.dumps({"id": "s-1", "type": "request", "action": "user.subscribe"}))
            proxy.drop_hints(lambda message: message.get("action") == "task.created")
            tasks.append(_plain_task(kandev, "Proxy: a dropped hint"))
            seen = _created(socket, tasks[0], until="office.task.created")
            assert "task.created" not in seen and proxy.hints_dropped >= 1
            proxy.heal()
            tasks.append(_plain_task(kandev, "Proxy: a hint passed on"))
            _created(socket, tasks[1], until="task.created")
            socket.ping().wait(10)  # control frames pass both ways
    finally:
        for task_id in tasks:
            kandev.delete_task(task_id)


def test_a_frozen_path_answers_with_kandev_s_last_reply_until_healed(
    proxy: KandevProxy, kandev: KandevServer
) -> None:
    path = f"/api/v1/workspaces/{kandev.workspace_id}/tasks"

    def ids() -> set[str]:
        reply = httpx.get(proxy.base_url + path, params={"page": 1, "page_size": 500}, timeout=30)
        reply.raise_for_status()
        return {t["id"] for t in reply.json()["tasks"]}

    before = ids()
    proxy.freeze_path(r"/tasks$")
    task_id = _plain_task(kandev, "Proxy: not in a frozen list")
    try:
        assert ids() == before and proxy.frozen == 1
        proxy.heal()
        assert ids() == before | {task_id}
    finally:
        kandev.delete_task(task_id)
    assert proxy.requests.count(f"GET {path}") == 3


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
