"""The routing / permission file: parsing, line-numbered errors, matching, who may answer."""

from __future__ import annotations

import pytest

from kandev_slack.config.routing import Route, Routing, RoutingError
from kandev_slack.config.routing_file import load_routing, parse_routing
from kandev_slack.core.domain import TaskInfo
from kandev_slack.kandev.models import KandevUser, Workspace

#: The reminder and escalation keys, allowed in [defaults] and [[route]] after the others.
FOLLOWUP_KEYS = (
    ", remind_after, remind_every, max_reminders, mention, escalate_after, escalate_to, "
    "escalate_mention, claim_for, quiet_hours, quiet_tz, digest, digest_tz, identity, "
    "notify_assignee"
)

EXAMPLE = """\
[defaults]
channel = "C0DEFAULT"          # else KANDEV_SLACK_CHANNEL
answerers = []                 # empty = anyone

[[route]]
workspace = "Platform"
channel = "C0PLATFORM"
answerers = ["U0ANA", "S0ONCALL"]

[[route]]
workspace = "ws-1234"
answerers = ["W0BOB"]

[[route]]
workspace = "Mobile"
channel = "G0MOBILE"
"""


def ws(workspace_id: str, workspace_name: str) -> TaskInfo:
    """A task of the workspace with this id and name (no labels, the default priority)."""
    return TaskInfo(task_id="t", workspace_id=workspace_id, workspace_name=workspace_name)


def errors(text: str, source: str = "routes.toml") -> list[str]:
    with pytest.raises(RoutingError) as caught:
        parse_routing(text, source)
    return caught.value.problems


def test_parses_the_documented_example() -> None:
    routing = parse_routing(EXAMPLE, "routes.toml", fallback_channel="C0ENV")
    assert routing.default_channel == "C0DEFAULT"  # the file wins over KANDEV_SLACK_CHANNEL
    assert [r.workspace for r in routing.rules] == ["Platform", "ws-1234", "Mobile"]
    assert [r.line for r in routing.rules] == [5, 10, 14]
    assert routing.channels() == ["C0DEFAULT", "C0PLATFORM", "G0MOBILE"]


def test_route_for_matches_by_name_ignoring_case() -> None:
    routing = parse_routing(EXAMPLE)
    assert routing.route_for(ws("some-id", "platform")) == Route(
        channel="C0PLATFORM", answerers=frozenset({"U0ANA", "S0ONCALL"})
    )


def test_route_for_matches_by_id_and_inherits_the_default_channel() -> None:
    routing = parse_routing(EXAMPLE)
    assert routing.route_for(ws("ws-1234", "Renamed")) == Route(
        channel="C0DEFAULT", answerers=frozenset({"W0BOB"})
    )


def test_route_without_answerers_inherits_the_default_answerers() -> None:
    routing = parse_routing(
        '[defaults]\nchannel = "C0D"\nanswerers = ["U0LEAD"]\n'
        '[[route]]\nworkspace = "Mobile"\nchannel = "C0MOB"\n'
        '[[route]]\nworkspace = "Open"\nanswerers = []\n'
    )
    assert routing.route_for(ws("x", "Mobile")) == Route(channel="C0MOB", answerers={"U0LEAD"})
    assert routing.route_for(ws("y", "Open")) == Route(channel="C0D", answerers=frozenset())
    assert routing.route_for(ws("z", "Other")) == Route(channel="C0D", answerers={"U0LEAD"})


def test_unrouted_workspace_falls_back_to_defaults_then_env() -> None:
    assert parse_routing(EXAMPLE).route_for(ws("zz", "Other")) == Route(channel="C0DEFAULT")
    routing = parse_routing(
        '[[route]]\nworkspace = "A"\nchannel = "C0A"\n', fallback_channel="C0ENV"
    )
    assert routing.route_for(ws("zz", "Other")) == Route(channel="C0ENV")
    assert routing.channels() == ["C0ENV", "C0A"]


def test_no_default_channel_means_no_route_for_unrouted_workspaces() -> None:
    routing = parse_routing('[[route]]\nworkspace = "A"\nchannel = "C0A"\n')
    assert routing.route_for(ws("zz", "Other")) is None
    assert routing.route_for(ws("zz", "A")) == Route(channel="C0A")


def test_without_a_file_everything_goes_to_the_env_channel() -> None:
    routing = load_routing(None, "C0ENV")
    assert routing.route_for(ws("any", "thing")) == Route(channel="C0ENV")


def test_load_routing_reads_the_file(tmp_path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text(EXAMPLE)
    assert load_routing(path).rules[0].workspace == "Platform"
    with pytest.raises(RoutingError) as caught:
        load_routing(tmp_path / "missing.toml")
    assert caught.value.problems == [f"{tmp_path / 'missing.toml'}: file not found"]


# ---- who may answer -----------------------------------------------------------------------


def test_anyone_may_answer_when_the_list_is_empty() -> None:
    assert Route(channel="C0A").may_answer("U0ANY", set())


def test_listed_users_may_answer() -> None:
    route = Route(channel="C0A", answerers=frozenset({"U0ANA", "W0BOB", "S0ONCALL"}))
    assert route.may_answer("U0ANA", set())
    assert route.may_answer("W0BOB", set())
    assert not route.may_answer("U0EVE", set())


def test_members_of_listed_groups_may_answer() -> None:
    route = Route(channel="C0A", answerers=frozenset({"U0ANA", "S0ONCALL"}))
    assert route.user_group_ids == {"S0ONCALL"}
    assert route.may_answer("U0EVE", {"S0OTHER", "S0ONCALL"})
    assert not route.may_answer("U0EVE", {"S0OTHER"})


# ---- errors name the line -----------------------------------------------------------------


def test_unknown_keys_name_their_line() -> None:
    text = EXAMPLE.replace('channel = "G0MOBILE"', 'chanel = "G0MOBILE"') + "\n[extra]\nx = 1\n"
    assert errors(text) == [
        "routes.toml, line 16: unknown key 'chanel' in [[route]]; "
        "allowed: workspace, labels, priority, channel, answerers" + FOLLOWUP_KEYS,
        "routes.toml, line 18: unknown key 'extra' in top level; allowed: defaults, route",
    ]


def test_unknown_key_in_defaults() -> None:
    assert errors("\n[defaults]\nchannel = 'C0A'\nanswerer = []\n") == [
        "routes.toml, line 4: unknown key 'answerer' in [defaults]; allowed: channel, answerers"
        + FOLLOWUP_KEYS
    ]


def test_bad_ids_name_the_line_of_the_id() -> None:
    text = """\
[defaults]
channel = "#general"

[[route]]
workspace = "Platform"
answerers = [
  "U0ANA",
  "@bob",
  "C0NOTAUSER",
]
"""
    assert errors(text) == [
        "routes.toml, line 2: channel: '#general' is a channel name, not a channel id; use the "
        "id (C…/G…), shown at the bottom of the channel's details in Slack",
        "routes.toml, line 8: answerers: '@bob' is a name, not an id; use a user id (U…/W…, "
        "profile ⋮ → Copy member ID) or a user-group id (S…)",
        "routes.toml, line 9: answerers: 'C0NOTAUSER' is neither a Slack user id (U…/W…) nor a "
        "user-group id (S…)",
    ]


def test_bad_route_channel_and_types() -> None:
    text = '[[route]]\nworkspace = "A"\nchannel = "X0BAD"\n\n[[route]]\nchannel = 5\n'
    assert errors(text) == [
        "routes.toml, line 3: channel: 'X0BAD' is not a Slack channel id (C… or G… "
        "followed by capitals and digits)",
        "routes.toml, line 5: [[route]] needs at least one criterion: 'workspace' (a Kandev "
        "workspace name or id), 'labels' or 'priority'",
        "routes.toml, line 6: channel in [[route]] should be a channel id string",
    ]


def test_a_direct_message_channel_names_its_line() -> None:
    text = '[defaults]\nchannel = "D0DEFAULT"\n\n[[route]]\nworkspace = "A"\nchannel = "D0ANA"\n'
    dm = (
        "is a direct-message conversation; the bot posts cards only in channels: use a public "
        "or private channel id (C…/G…) and invite the bot there"
    )
    assert errors(text) == [
        f"routes.toml, line 2: channel: 'D0DEFAULT' {dm}",
        f"routes.toml, line 6: channel: 'D0ANA' {dm}",
    ]


def test_duplicate_routes_name_both_lines() -> None:
    text = '[[route]]\nworkspace = "A"\n\n[[route]]\nworkspace = "a"\n'
    assert errors(text) == [
        "routes.toml, line 4: workspace 'a' already has a route (line 1); merge them"
    ]


def test_invalid_toml_names_the_line() -> None:
    assert errors('[defaults]\nchannel = "C0A\n') == [
        "routes.toml, line 2: not valid TOML: Illegal character '\\n'"
    ]


# ---- against Kandev's workspaces ----------------------------------------------------------

WORKSPACES = [
    Workspace(id="ws-1234", name="Default"),
    Workspace(id="ws-9", name="Platform"),
    Workspace(id="ws-10", name="Mobile"),
]


def test_known_workspaces_pass() -> None:
    assert parse_routing(EXAMPLE).validate_workspaces(WORKSPACES) == []


def test_unknown_workspace_names_its_line() -> None:
    routing = parse_routing(EXAMPLE, "routes.toml")
    problems = routing.validate_workspaces(WORKSPACES[:2])
    assert problems == [
        "routes.toml, line 14: workspace 'Mobile' is not a Kandev workspace name or id "
        "(Kandev has: 'Default' (ws-1234), 'Platform' (ws-9))"
    ]


def test_with_auth_on_an_unknown_workspace_says_who_must_add_the_bot() -> None:
    """Kandev's workspaces are private to their members: one the bot's account does not see
    may exist, and its owner must add the bot (by the name and email Kandev shows)."""
    routing = parse_routing(EXAMPLE, "routes.toml")
    bot = KandevUser(id="u-bot", email="bot@example.com", display_name="Kandev Bot")
    problems = routing.validate_workspaces(WORKSPACES[:2], bot=bot)
    assert problems == [
        "routes.toml, line 14: workspace 'Mobile' is not one the bot's Kandev account can see "
        "(it sees: 'Default' (ws-1234), 'Platform' (ws-9)); Kandev workspaces are private to "
        "their members: its owner must add Kandev Bot (bot@example.com) as a member; viewer "
        "is enough (or fix the name or id)"
    ]
    assert routing.validate_workspaces(WORKSPACES, bot=bot) == []
    nameless = KandevUser(id="u-bot", email="bot@example.com")
    assert (
        "must add bot@example.com as a member"
        in routing.validate_workspaces(WORKSPACES[:2], bot=nameless)[0]
    )


def test_ambiguous_workspace_name() -> None:
    routing = parse_routing('[[route]]\nworkspace = "Twin"\nchannel = "C0A"\n', "r.toml", "C0D")
    problems = routing.validate_workspaces(
        [Workspace(id="a", name="Twin"), Workspace(id="b", name="twin")]
    )
    assert problems == [
        "r.toml, line 1: workspace 'Twin' matches 2 Kandev workspaces (a, b); use the workspace "
        "id instead"
    ]


def test_workspace_without_any_channel_is_a_problem() -> None:
    routing = parse_routing('[[route]]\nworkspace = "Platform"\nchannel = "C0A"\n')
    assert routing.validate_workspaces(WORKSPACES[:2]) == [
        "Kandev workspace 'Default' (ws-1234) has no Slack channel: add a [[route]] with a "
        "channel for it, or set [defaults] channel or KANDEV_SLACK_CHANNEL"
    ]


def test_routing_is_immutable() -> None:
    routing = Routing(default_channel="C0A")
    with pytest.raises(ValueError):
        routing.default_channel = "C0B"  # type: ignore[misc]


# ---- identity: whose Kandev account clicks are made with ---------------------------------


def test_identity_defaults_to_the_bot_and_routes_inherit_the_defaults() -> None:
    routing = parse_routing('[defaults]\nchannel = "C0A"\n[[route]]\nworkspace = "W"\n')
    assert routing.route_for(ws("W", "W")) == Route(channel="C0A")
    assert routing.route_for(ws("W", "W")).identity == "bot"  # type: ignore[union-attr]
    assert not routing.needs_tokens

    text = (
        '[defaults]\nchannel = "C0A"\nidentity = "linked"\n'
        '[[route]]\nworkspace = "W"\nidentity = "required"\nnotify_assignee = true\n'
        '[[route]]\nworkspace = "X"\n'
    )
    routing = parse_routing(text)
    w, x, other = (routing.route_for(ws(n, n)) for n in ("W", "X", "Y"))
    assert w is not None and (w.identity, w.notify_assignee) == ("required", True)
    assert x is not None and (x.identity, x.notify_assignee) == ("linked", False)
    assert other is not None and other.identity == "linked"
    assert routing.needs_tokens


def test_a_bad_identity_or_notify_assignee_names_its_line_and_the_values_allowed() -> None:
    text = (
        '[defaults]\nchannel = "C0A"\nidentity = "me"\n'
        '[[route]]\nworkspace = "W"\nnotify_assignee = "yes"\n'
    )
    with pytest.raises(RoutingError) as raised:
        parse_routing(text, "routes.toml")
    assert raised.value.problems == [
        "routes.toml, line 3: identity in [defaults] should be one of "
        '"bot", "linked" or "required"',
        "routes.toml, line 6: notify_assignee in [[route]] should be true or false",
    ]
