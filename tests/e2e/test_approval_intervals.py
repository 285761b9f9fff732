"""What the approval sweep costs, against the real Kandev with its push hints on, through the
recording proxy: with approvals waiting, an interval in which nothing changed reads only the
workspaces' task lists (no request list, no session read); a turn cancelled while its card
waits, and a request resolved in Kandev, still end their cards at once, from the hints alone
(the task lists frozen: they show nothing); a change the hints and the task lists both miss is
caught by the slower full sweep (``KANDEV_FULL_SWEEP_INTERVAL``)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator

import pytest

from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import FakeSlack
from tests.e2e.helpers import POLL_S, outcome_line, start_bot, wait_card, wait_outcome
from tests.kit.harness import CHANNEL, KandevProxy, KandevServer, Permissions, permission_spec

RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo/app"})
WAITING = 4
TASK_LISTS = r"^/api/v1/workspaces/[^/]+/tasks$"
REQUEST_LIST = "mcp list_pending_agent_permissions_kandev"
NOT_ANSWERABLE = "⏹ Not answerable from Slack"


@pytest.fixture
def proxy(seed) -> Iterator[KandevProxy]:
    started = KandevProxy(seed.server.base_url).start()
    yield started
    started.close()


def _task_list_pages(kandev: KandevServer) -> int:
    """How many task-list reads one look at every workspace takes (100 tasks a page)."""
    pages = 0
    for workspace in kandev.workspaces():
        listed = kandev.http.get(f"/workspaces/{workspace['id']}/tasks", params={"page_size": 1})
        pages += max(1, math.ceil(listed.json()["total"] / 100))
    return pages


def _approval_reads(requests: list[str]) -> list[str]:
    """The sweep's reads among the bot's requests: task lists, request lists, session reads."""
    return [
        r
        for r in requests
        if r == REQUEST_LIST
        or r.startswith("GET /api/v1/task-sessions/")
        or (r.startswith("GET /api/v1/workspaces/") and r.endswith("/tasks"))
    ]


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _waiting(fake: FakeSlack, ts: str) -> bool:
    return outcome_line(fake.message(CHANNEL, ts)) is None


def test_an_idle_interval_reads_only_the_task_lists_and_the_hints_end_cards(
    app_factory, seed, fake_slack, proxy
) -> None:
    kandev = Permissions(seed.server)
    seeded = [seed.permission([RM], title=f"Waiting approval {n}") for n in range(WAITING)]
    start_bot(app_factory, KANDEV_URL=proxy.base_url, KANDEV_FULL_SWEEP_INTERVAL="600")
    cards = [wait_card(fake_slack, approval_key(s.request_id)) for s in seeded]
    _wait(lambda: proxy.tunnels >= 1, 10, "the hints never connected")
    time.sleep(POLL_S * 2)  # the full sweep at the hints' connect, then light intervals

    before = len(proxy.requests)
    time.sleep(POLL_S * 3)
    idle = _approval_reads(proxy.requests[before:])
    intervals = 3
    pages = _task_list_pages(seed.server)
    assert idle, "no interval ran"
    assert all("/tasks" in r for r in idle), idle  # no request list, no session read
    assert len(idle) <= pages * (intervals + 1), (len(idle), pages)

    # The task lists show nothing from now on: only the hints can tell.
    proxy.freeze_path(TASK_LISTS)
    cancelled, resolved = seeded[0], seeded[1]
    kandev.cancel_turn(cancelled.session_id)
    done = wait_outcome(fake_slack, cards[0].ts, "⏹", timeout=POLL_S * 4)
    assert outcome_line(done).startswith(NOT_ANSWERABLE)
    kandev.respond(resolved, "reject_once")
    done = wait_outcome(fake_slack, cards[1].ts, "⛔", timeout=POLL_S * 4)
    assert outcome_line(done).startswith("⛔ Rejected in Kandev")
    _wait(lambda: proxy.frozen > 0, POLL_S * 3, "no interval read the frozen task lists")
    assert all(_waiting(fake_slack, c.ts) for c in cards[2:])


def test_a_change_the_hints_and_the_task_lists_miss_is_caught_by_the_full_sweep(
    app_factory, seed, fake_slack, proxy
) -> None:
    full_sweep_s = 8.0
    kandev = Permissions(seed.server)
    seeded = seed.permission([RM], title="A lost hint")
    start_bot(app_factory, KANDEV_URL=proxy.base_url, KANDEV_FULL_SWEEP_INTERVAL=str(full_sweep_s))
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    _wait(lambda: proxy.tunnels >= 1, 10, "the hints never connected")

    proxy.drop_hints()  # every hint is lost, the link stays up
    proxy.freeze_path(TASK_LISTS)  # and the task lists show nothing
    # Once a full sweep has read the card's turn (it is the only one to, now), cancel it.
    after = len(proxy.requests)
    turns = f"GET /api/v1/task-sessions/{seeded.session_id}/turns"
    _wait(lambda: turns in proxy.requests[after:], full_sweep_s * 2, "no full sweep ran")
    time.sleep(0.2)
    kandev.cancel_turn(seeded.session_id)
    cancelled_at = time.monotonic()

    time.sleep(POLL_S * 2.5)  # light intervals come and go: they cannot see it
    assert _waiting(fake_slack, card.ts), "ended before the full sweep"
    done = wait_outcome(fake_slack, card.ts, "⏹", timeout=full_sweep_s + POLL_S * 3)
    assert outcome_line(done).startswith(NOT_ANSWERABLE)
    assert time.monotonic() - cancelled_at > POLL_S * 2.5
    assert proxy.hints_dropped > 0 and proxy.frozen > 0


def test_in_a_workspace_the_bot_only_reads_the_status_hints_post_and_end_approvals(
    people_app_factory, kandev_people, people_seed, fake_slack
) -> None:
    # Kandev's auth on: session.pending_action_changed reaches only the workspace's owner (Eve);
    # the bot, a viewer, gets task.status_summary.updated (kandev-identity.md §6). No sweep
    # comes (a poll interval of 10 minutes): only those hints can tell.
    cast = kandev_people
    start_bot(people_app_factory, KANDEV_POLL_INTERVAL="600")
    time.sleep(2)  # the sweeps at the start are over
    eves = people_seed.by(cast.eve)
    seeded = eves.permission([RM], title="Eve's approval", workspace_id=cast.eve_ws)
    card = wait_card(fake_slack, approval_key(seeded.request_id), timeout=15)
    Permissions(cast.server, cast.eve.token).respond(seeded, "reject_once")
    done = wait_outcome(fake_slack, card.ts, "⛔", timeout=15)
    assert outcome_line(done).startswith("⛔ Rejected")
