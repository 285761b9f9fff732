"""The local Kandev of ``preview --with-kandev``: its workspace and scripted agents carry the
names of ``scenario.toml`` (the cards show them), not "Default Workspace" and "mock-fast"."""

from __future__ import annotations

from kandev_slack.kits.kandevkit import KandevServer, ensure_runtime
from kandev_slack.preview import scenario


def test_the_workspace_and_the_scripted_agents_have_meaningful_names() -> None:
    wanted = scenario.names()
    assert wanted.workspace != "Default Workspace" and "mock" not in wanted.agent.lower()
    with KandevServer(ensure_runtime()) as kandev:
        scenario.name_all(kandev)
        orders = scenario.asks()[0]
        bundle = kandev.seed_bundle(orders.questions, orders.context, orders.title)
        task = kandev.task(bundle.task_id)
        assert task["primary_agent_name"] == wanted.agent
        assert [w["name"] for w in kandev.workspaces()] == [wanted.workspace]
