"""Routing by task metadata: workspace, labels (all present) and priority (any of), first
match wins, else the defaults; bad routes are start-up errors naming their line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.config.routing import Route, RouteRule, Routing, RoutingError
from kandev_slack.config.routing_file import parse_routing
from kandev_slack.core.domain import TaskInfo
from kandev_slack.kandev.models import PRIORITIES

README_EXAMPLE = """\
[defaults]
channel = "C0DEFAULT"

[[route]]
priority = ["critical"]
channel = "C0ONCALL"
answerers = ["S0ONCALL"]

[[route]]
workspace = "Platform"
labels = ["database"]
channel = "C0DBA"
"""


def task(workspace: str = "Platform", labels=(), priority: str = "medium") -> TaskInfo:
    return TaskInfo(
        task_id="t",
        workspace_id=f"id-{workspace}",
        workspace_name=workspace,
        labels=tuple(labels),
        priority=priority,
    )


def errors(text: str) -> list[str]:
    with pytest.raises(RoutingError) as caught:
        parse_routing(text, "routes.toml")
    return caught.value.problems


def test_the_readme_example_routes_by_priority_then_workspace_and_labels() -> None:
    routing = parse_routing(README_EXAMPLE)
    oncall = Route(channel="C0ONCALL", answerers=frozenset({"S0ONCALL"}))
    assert routing.route_for(task(priority="critical", labels=["database"])) == oncall
    assert routing.route_for(task("Other", priority="critical")) == oncall
    assert routing.route_for(task(labels=["database", "infra"])) == Route(channel="C0DBA")
    assert routing.route_for(task(labels=["DataBase"])) == Route(channel="C0DBA")
    assert routing.route_for(task(labels=["infra"])) == Route(channel="C0DEFAULT")
    assert routing.route_for(task("Mobile", labels=["database"])) == Route(channel="C0DEFAULT")
    assert routing.route_for(task(priority="high")) == Route(channel="C0DEFAULT")


def test_every_listed_label_must_be_present_and_any_priority_matches() -> None:
    routing = parse_routing(
        '[defaults]\nchannel = "C0D"\n'
        '[[route]]\nlabels = ["db", "prod"]\npriority = ["high", "critical"]\nchannel = "C0X"\n'
    )
    assert routing.route_for(task(labels=["db", "prod"], priority="high")).channel == "C0X"
    assert routing.route_for(task(labels=["db", "prod"], priority="critical")).channel == ("C0X")
    assert routing.route_for(task(labels=["db"], priority="high")).channel == "C0D"
    assert routing.route_for(task(labels=["db", "prod"], priority="low")).channel == "C0D"


def test_a_task_without_priority_counts_as_medium() -> None:
    routing = parse_routing('[[route]]\npriority = ["medium"]\nchannel = "C0M"\n')
    assert routing.route_for(task(priority="")) == Route(channel="C0M")


def test_the_route_taken_is_named_for_check() -> None:
    routing = parse_routing(README_EXAMPLE)
    rule = routing.rule_for(task(labels=["database"]))
    assert rule is not None
    assert rule.describe() == "route at line 9 (workspace 'Platform'; labels database)"
    assert routing.rule_for(task(labels=["x"])) is None


def test_an_empty_route_is_a_start_up_error_naming_its_line() -> None:
    assert errors('[defaults]\nchannel = "C0D"\n\n[[route]]\nchannel = "C0A"\n') == [
        "routes.toml, line 4: [[route]] needs at least one criterion: 'workspace' (a Kandev "
        "workspace name or id), 'labels' or 'priority'"
    ]


def test_malformed_metadata_values_name_their_line() -> None:
    text = (
        '[[route]]\nworkspace = "A"\npriority = ["urgent"]\nchannel = "C0A"\n\n'
        '[[route]]\nlabels = "database"\nchannel = "C0B"\n\n'
        "[[route]]\nlabels = []\n\n"
        '[[route]]\nlabels = [""]\n\n'
        '[[route]]\nworkspace = "B"\npriority = "high"\n'
    )
    assert errors(text) == [
        "routes.toml, line 3: priority: 'urgent' is not a Kandev priority (one of low, medium, "
        "high, critical)",
        "routes.toml, line 7: labels in [[route]] should be a list of label strings",
        "routes.toml, line 11: labels in [[route]] is an empty list; list at least one value or "
        "remove it",
        "routes.toml, line 14: labels: an empty label matches no task; remove it",
        "routes.toml, line 18: priority in [[route]] should be a list of priorities (low, "
        "medium, high, critical)",
    ]


def test_unknown_keys_list_the_metadata_criteria() -> None:
    assert errors('[[route]]\nworkspace = "A"\nlabel = ["x"]\n') == [
        "routes.toml, line 3: unknown key 'label' in [[route]]; allowed: workspace, labels, "
        "priority, channel, answerers, remind_after, remind_every, max_reminders, mention, "
        "escalate_after, escalate_to, escalate_mention, claim_for, quiet_hours, quiet_tz, "
        "digest, digest_tz, identity, notify_assignee"
    ]


def test_same_workspace_with_other_criteria_is_not_a_duplicate() -> None:
    text = (
        '[defaults]\nchannel = "C0D"\n'
        '[[route]]\nworkspace = "A"\nlabels = ["db"]\nchannel = "C0DB"\n'
        '[[route]]\nworkspace = "A"\nchannel = "C0A"\n'
        '[[route]]\nworkspace = "a"\nlabels = ["DB"]\n'
    )
    assert errors(text) == [
        "routes.toml, line 10: the same criteria already have a route (line 3); merge them"
    ]


# ---- the matcher, property-tested --------------------------------------------------------

LABELS = st.sampled_from(["db", "infra", "ui", "prod"])
CRITERIA = st.tuples(
    st.one_of(st.none(), st.sampled_from(["A", "B"])),
    st.frozensets(LABELS, max_size=2),
    st.frozensets(st.sampled_from(PRIORITIES), max_size=2),
).filter(lambda c: c[0] is not None or c[1] or c[2])


def _rule(n: int, criteria) -> RouteRule:
    workspace, labels, priorities = criteria
    return RouteRule(
        workspace=workspace,
        labels=labels,
        priorities=priorities,
        channel=f"C0R{n}",
        answerers=frozenset(),
        line=n,
    )


@given(
    st.lists(CRITERIA, max_size=5),
    st.sampled_from(["A", "B", "C"]),
    st.frozensets(LABELS, max_size=4),
    st.sampled_from(PRIORITIES),
)
def test_first_rule_whose_every_criterion_matches_wins(rules, workspace, labels, priority):
    routing = Routing(
        default_channel="C0DEF", rules=tuple(_rule(n, c) for n, c in enumerate(rules))
    )
    expected = "C0DEF"
    for n, (ws, wanted, priorities) in enumerate(rules):
        if (
            (ws is None or ws == workspace)
            and wanted <= labels
            and (not priorities or priority in priorities)
        ):
            expected = f"C0R{n}"
            break
    route = routing.route_for(
        TaskInfo(
            task_id="t",
            workspace_id=f"id-{workspace}",
            workspace_name=workspace,
            labels=tuple(sorted(labels)),
            priority=priority,
        )
    )
    assert route is not None and route.channel == expected
