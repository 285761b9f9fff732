"""Answerers.answerable: the same verdicts as asking item by item, judged once per route."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.domain import TaskInfo
from kandev_slack.usecases.answerers import Answerers

ALICE, BOB, CAROL = "U0ALICE001", "U0BOB00002", "U0CAROL003"
TEAM = "T0OWN00001"


class CountingDirectory:
    """Slack's answers about people and channels, counting every question asked."""

    def __init__(self, members: dict[str, frozenset[str]], groups: dict[str, frozenset[str]]):
        self.members, self.groups = members, groups
        self.asked: Counter[str] = Counter()

    def group_members(self, group_id: str) -> frozenset[str]:
        self.asked["group_members"] += 1
        return self.groups.get(group_id, frozenset())

    def is_channel_member(self, channel: str, user_id: str) -> bool:
        self.asked["is_channel_member"] += 1
        return user_id in self.members.get(channel, frozenset())

    def of_own_organisation(self, user_id: str) -> bool:
        self.asked["of_own_organisation"] += 1
        return user_id != CAROL

    def own_organisation(self) -> tuple[str, str | None]:
        return TEAM, None


ROUTING = Routing(
    default_channel="C0DEFAULT",
    rules=(
        RouteRule(workspace="Platform", channel="C0PLAT", answerers=frozenset({ALICE}), line=1),
        RouteRule(
            workspace="Data",
            labels=frozenset({"db"}),
            channel="C0DB",
            answerers=frozenset(),
            line=2,
        ),
        RouteRule(
            workspace="Data",
            priorities=frozenset({"high"}),
            channel="C0HOT",
            answerers=frozenset({"S0ONCALL01"}),
            line=3,
        ),
        RouteRule(workspace="Data", channel="C0DATA", answerers=frozenset(), line=4),
    ),
)
DIRECTORY_MEMBERS = {
    "C0DEFAULT": frozenset({ALICE, BOB, CAROL}),
    "C0DB": frozenset({BOB}),
    "C0DATA": frozenset({ALICE, CAROL}),
}
GROUPS = {"S0ONCALL01": frozenset({BOB})}

tasks = st.builds(
    TaskInfo,
    task_id=st.text("abc", min_size=1, max_size=4),
    workspace_id=st.sampled_from(["ws-1", "ws-2", "ws-3"]),
    workspace_name=st.sampled_from(["Platform", "Data", "Other", ""]),
    labels=st.lists(st.sampled_from(["db", "ui", "DB"]), max_size=2).map(tuple),
    priority=st.sampled_from(["", "high", "low"]),
)


@given(st.lists(tasks, max_size=30), st.sampled_from([ALICE, BOB, CAROL]))
def test_answerable_keeps_exactly_what_may_answer_grants_in_order(
    items: list[TaskInfo], user: str
) -> None:
    answerers = Answerers(ROUTING, CountingDirectory(DIRECTORY_MEMBERS, GROUPS))

    kept = answerers.answerable(items, user, lambda task: task)

    assert kept == [task for task in items if answerers.may_answer(task, user)]


def test_a_thousand_items_over_three_routes_ask_slack_once_per_route() -> None:
    directory = CountingDirectory(DIRECTORY_MEMBERS, GROUPS)
    answerers = Answerers(ROUTING, directory)
    routes = [
        TaskInfo(task_id="t", workspace_name="Data", labels=("db",)),  # C0DB: members
        TaskInfo(task_id="t", workspace_name="Data", priority="high"),  # C0HOT: a group
        TaskInfo(task_id="t", workspace_name="Other"),  # the default channel: members
    ]
    items = [(n, routes[n % 3]) for n in range(1_000)]

    kept = answerers.answerable(items, BOB, lambda item: item[1])

    assert [n for n, _ in kept] == list(range(1_000))
    assert directory.asked == {"group_members": 1, "is_channel_member": 2, "of_own_organisation": 2}
