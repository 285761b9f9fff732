"""``kandev-slack check`` names the route each waiting question takes (by its task's
workspace, labels and priority)."""

from __future__ import annotations

from kandev_slack.commands.check import approval_findings, waiting_findings
from kandev_slack.config.routing_file import parse_routing
from tests.kit.factories import make_bundle
from tests.kit.fakes import FakeKandev

ROUTES = """\
[defaults]
channel = "C0DEFAULT"

[[route]]
priority = ["critical"]
channel = "C0ONCALL"

[[route]]
workspace = "Platform"
labels = ["database"]
channel = "C0DBA"
"""


def test_each_waiting_question_names_its_route() -> None:
    kandev = FakeKandev()
    kandev.add(make_bundle(pending_id="p1aaaaaaaa", task_id="t1"), title="Fire")
    kandev.add(make_bundle(pending_id="p2bbbbbbbb", task_id="t2"), title="Schema")
    kandev.add(make_bundle(pending_id="p3cccccccc", task_id="t3"), title="Docs")
    kandev.tasks["t1"] = kandev.tasks["t1"].model_copy(update={"priority": "critical"})
    kandev.tasks["t2"] = kandev.tasks["t2"].model_copy(update={"labels": ("database",)})
    found = waiting_findings(kandev, parse_routing(ROUTES, "routes.toml"), each=True)
    assert found[0].detail == "3 waiting: 1 to C0DBA, 1 to C0DEFAULT, 1 to C0ONCALL"
    assert [f.detail for f in found if f.name.startswith("question ")] == [
        "'Fire' in workspace 'Platform' → C0ONCALL ([[route]] priority critical (routes.toml:4))",
        "'Schema' in workspace 'Platform' → C0DBA ([[route]] Platform labels database "
        "(routes.toml:8))",
        "'Docs' in workspace 'Platform' → C0DEFAULT (the default channel)",
    ]
    assert all(f.ok for f in found)


def test_each_waiting_approval_names_its_route() -> None:
    kandev = FakeKandev()
    kandev.add(make_bundle(pending_id="p1aaaaaaaa", task_id="t1"), title="Fire")
    kandev.active.clear()  # the task stays; nothing asks a question
    kandev.tasks["t1"] = kandev.tasks["t1"].model_copy(update={"priority": "critical"})
    kandev.permissions.request("t1")
    kandev.permissions.flagged["ws-1"] = ["t1"]
    found = approval_findings(kandev, parse_routing(ROUTES, "routes.toml"), each=True)
    assert found[0].name == "waiting approvals" and found[0].detail == "1 waiting: 1 to C0ONCALL"
    assert [f.detail for f in found if f.name.startswith("approval ")] == [
        "'Fire' in workspace 'Platform' → C0ONCALL ([[route]] priority critical (routes.toml:4))"
    ]
