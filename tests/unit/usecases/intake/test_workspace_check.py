"""The routing file's workspaces against Kandev's: at start-up, or by its worker once Kandev
answers (tests on the in-memory Kandev; the routing file as the parser reads it)."""

from __future__ import annotations

import threading

from kandev_slack.config.routing_file import parse_routing
from kandev_slack.kandev.models import KandevUser, Workspace
from kandev_slack.ops.health import Health
from kandev_slack.usecases.intake.workspace_check import WorkspaceCheck
from tests.kit.fakes import FakeKandev
from tests.kit.polling import eventually

ROUTES = '[[route]]\nworkspace = "Platform"\nchannel = "C0PLAT"\n'


def checker(kandev: FakeKandev, health: Health) -> WorkspaceCheck:
    return WorkspaceCheck(parse_routing(ROUTES, "routing.toml"), kandev, health)


def test_known_workspaces_pass_and_clear_the_routing_problem() -> None:
    kandev, health = FakeKandev(), Health()
    kandev.workspace_list = [Workspace(id="ws-1", name="Platform")]
    health.problem("routing", "workspaces not validated yet (Kandev unreachable)")
    check = checker(kandev, health)

    assert check.check() == []
    assert check.done
    assert health.report().ok


def test_an_unknown_workspace_is_a_problem_in_healthz() -> None:
    kandev, health = FakeKandev(), Health()
    kandev.workspace_list = [Workspace(id="ws-2", name="Mobile")]
    check = checker(kandev, health)

    problems = check.check()

    assert "workspace 'Platform' is not a Kandev workspace" in problems[0]
    assert "has no Slack channel" in problems[1]  # Mobile: routed nowhere
    [reason] = health.report().reasons
    assert reason.startswith("routing: ") and "'Platform'" in reason


def test_with_auth_on_an_unseen_workspace_names_whose_account_to_add() -> None:
    kandev, health = FakeKandev(), Health()
    kandev.workspace_list = [Workspace(id="ws-2", name="Mobile")]
    kandev.user = KandevUser(id="u-bot", email="bot@example.com", display_name="Kandev Bot")

    problems = checker(kandev, health).check()

    assert "workspace 'Platform' is not one the bot's Kandev account can see" in problems[0]
    assert (
        "its owner must add Kandev Bot (bot@example.com) as a member; viewer is enough"
        in (problems[0])
    )
    assert len(kandev.called("account")) == 1  # asked only because something is wrong


def test_the_bots_account_is_not_asked_when_every_route_matches() -> None:
    kandev, health = FakeKandev(), Health()
    kandev.workspace_list = [Workspace(id="ws-1", name="Platform")]
    kandev.user = KandevUser(id="u-bot", email="bot@example.com")
    assert checker(kandev, health).check() == []
    assert kandev.called("account") == []


def test_the_worker_retries_until_kandev_answers_then_stops() -> None:
    kandev, health = FakeKandev(), Health()
    kandev.workspace_list = [Workspace(id="ws-1", name="Platform")]
    kandev.fail("workspaces", times=3)
    check, stop = checker(kandev, health), threading.Event()
    worker = threading.Thread(target=check.run, args=(stop, 0.01), daemon=True)
    worker.start()

    eventually(lambda: check.done, timeout=10.0, interval=0.01)
    worker.join(timeout=10.0)

    assert not worker.is_alive()  # done: the worker ends by itself
    assert len(kandev.called("workspaces")) == 4  # three failures, then the check
    assert health.report().ok
    stop.set()
