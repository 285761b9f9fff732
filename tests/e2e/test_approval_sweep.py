"""Approvals that never get stuck or lost, against the real Kandev: the sweep reads a workspace
of more than 2,000 tasks to its last page (an approval there gets its card and ends when
resolved elsewhere, /healthz stays ok); a turn cancelled before its card is posted (the bot was
down) is never answered from Slack; nor is one the agent gave up on, when someone clicks."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE
from tests.e2e.helpers import (
    POLL_S,
    assert_terminal_controls,
    card_posts,
    outcome_line,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_outcome,
)
from tests.kit.harness import (
    CHANNEL,
    InProcessBot,
    KandevProxy,
    KandevServer,
    Permissions,
    bot_env,
    permission_spec,
)

RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo/app"})
#: More tasks than the 20 pages of 100 the sweep used to stop at.
MANY_TASKS = 2050
NOT_ANSWERABLE = "⏹ Not answerable from Slack"


def _plain_tasks(server: KandevServer, workspace_id: str, count: int) -> list[str]:
    """``count`` tasks without an agent (cheap: about 15 ms each), in ``workspace_id``."""
    workflow = server.workflow(workspace_id)

    def create(number: int) -> str:
        body = {
            "workspace_id": workspace_id,
            "title": f"Filler {number}",
            "description": "no agent",
            "start_agent": False,
            "workflow_id": workflow.workflow_id,
            "workflow_step_id": workflow.start_step_id,
        }
        response = server.http.post("/tasks", json=body)
        response.raise_for_status()
        return str(response.json()["id"])

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(create, range(count)))


@pytest.fixture
def crowded_kandev(kandev_runtime: Path) -> Iterator[KandevServer]:
    """A Kandev of its own: its thousands of tasks go with it (deleting them takes longer)."""
    server = KandevServer(kandev_runtime).start()
    yield server
    server.close()


def _turn_over(kandev: Permissions, session_id: str) -> bool:
    response = kandev.server.http.get(f"/task-sessions/{session_id}/turns")
    response.raise_for_status()
    turns: list[dict[str, Any]] = response.json()["turns"]
    return bool(turns) and bool(turns[-1].get("completed_at"))


def _wait_turn_over(kandev: Permissions, session_id: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not _turn_over(kandev, session_id):
        assert time.monotonic() < deadline, f"the turn of {session_id} never ended"
        time.sleep(0.2)


def test_an_approval_past_2000_tasks_is_posted_and_ended(
    crowded_kandev, fake_slack, tmp_path
) -> None:
    # The request's task is the oldest: the last of the workspace's pages (newest first).
    kandev = Permissions(crowded_kandev)
    seeded = kandev.seed([RM], title="Behind two thousand tasks")
    workspace_id = crowded_kandev.workspace_id
    _plain_tasks(crowded_kandev, workspace_id, MANY_TASKS)
    listed = crowded_kandev.http.get(f"/workspaces/{workspace_id}/tasks", params={"page_size": 1})
    assert listed.json()["total"] == MANY_TASKS + 1

    env = bot_env(fake_slack, crowded_kandev, f"sqlite:///{tmp_path / 'bot.db'}", mode="http")
    env |= {"KANDEV_HINTS": "off", "KANDEV_POLL_INTERVAL": str(POLL_S)}  # the sweep alone
    bot = InProcessBot(env).start()
    try:
        card = wait_card(fake_slack, approval_key(seeded.request_id), timeout=60)
        status, health = bot.health()
        assert (status, health["status"]) == (200, "ok"), health

        reply = kandev.ws_request("permission.respond", seeded.resolve_arguments("reject_once"))
        assert reply["success"] is True, reply
        done = wait_outcome(fake_slack, card.ts, "⛔", timeout=60)
        assert outcome_line(done).startswith("⛔ Rejected in Kandev")
        assert bot.health()[0] == 200
    finally:
        bot.stop()


def test_a_turn_cancelled_before_its_card_is_posted_is_never_answered(
    app_factory, seed, fake_slack
) -> None:
    # The bot is down while the agent's turn is cancelled: Kandev keeps the request listed and
    # "resolvable", and the cancellation revision the bot first sees is already the new one.
    kandev = Permissions(seed.server)
    seeded = seed.permission([RM], title="Cancelled while the bot was down")
    kandev.cancel_turn(seeded.session_id)
    _wait_turn_over(kandev, seeded.session_id)

    start_bot(app_factory)
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    done = wait_outcome(fake_slack, card.ts, "⏹")
    assert outcome_line(done).startswith(NOT_ANSWERABLE)
    # Posted ended: it never offered a choice to click.
    first = card_posts(fake_slack, approval_key(seeded.request_id))[0].params
    assert "Allow once" not in repr(first["blocks"])
    assert_terminal_controls(done)
    time.sleep(POLL_S * 2)  # sweeps come and go: nothing is sent
    assert [p["request_id"] for p in kandev.list(seeded.task_id)] == [seeded.request_id]
    statuses = [m["metadata"].get("status") for m in kandev.messages(seeded.session_id)]
    assert "approved" not in statuses, statuses


def test_a_click_after_the_agent_gave_up_sends_nothing(
    app_factory, seed, fake_slack, slack_driver, request
) -> None:
    # The agent stops waiting and ends its turn without any cancel: the revision never moves,
    # Kandev still lists the request. No sweep runs in between (a long poll interval, and every
    # hint but the one announcing the request is lost: a status hint would start a sweep that
    # ends the card first): the click itself reads the turn before sending.
    proxy = KandevProxy(seed.server.base_url).start()
    request.addfinalizer(proxy.close)
    proxy.drop_hints(lambda hint: (hint.get("payload") or {}).get("pending_action") != "permission")
    bot = start_bot(
        app_factory,
        KANDEV_URL=proxy.base_url,
        KANDEV_POLL_INTERVAL="600",
        KANDEV_FULL_SWEEP_INTERVAL="600",
    )
    kandev = Permissions(seed.server)
    gives_up = permission_spec("Run make deploy", "execute", {"command": "make deploy"}, timeout=3)
    seeded = seed.permission([gives_up], title="The agent gave up")
    card = wait_card(fake_slack, approval_key(seeded.request_id), timeout=15)
    assert outcome_line(card) is None
    _wait_turn_over(kandev, seeded.session_id)
    assert [p["request_id"] for p in kandev.list(seeded.task_id)] == [seeded.request_id]

    ack = slack_driver(bot.events_url).click(CHANNEL, card.ts, text="Allow once", user=ALICE)
    assert ack.status == 200
    told = wait_ephemeral(fake_slack, ALICE.id, "Nothing was sent")
    assert "turn was cancelled" in told.text
    done = wait_outcome(fake_slack, card.ts, "⏹")
    assert outcome_line(done).startswith(NOT_ANSWERABLE)
    assert [p["request_id"] for p in kandev.list(seeded.task_id)] == [seeded.request_id]
    statuses = [m["metadata"].get("status") for m in kandev.messages(seeded.session_id)]
    assert "approved" not in statuses, statuses
    assert proxy.hints_dropped > 0  # the status hints came, and were lost
