"""The routing file's reminder and escalation keys: durations, inheritance from [defaults],
and every mistake a start-up error naming its line."""

from __future__ import annotations

import pytest

from kandev_slack.config.followups import FollowUps, describe_duration, mentions, parse_duration
from kandev_slack.config.routing import RoutingError
from kandev_slack.config.routing_file import parse_routing
from kandev_slack.core.domain import TaskInfo

GOOD = """\
[defaults]
channel = "C0DEFAULT"
remind_after = "15m"
remind_every = "30m"
max_reminders = 2
mention = ["S0ONCALL", "U0ANA"]

[[route]]
workspace = "Platform"
channel = "C0PLATFORM"
remind_after = "90s"
escalate_after = "1h"
escalate_to = "U0LEAD"
escalate_mention = ["S0LEADS"]

[[route]]
workspace = "Quiet"
"""


def ws(workspace_id: str, workspace_name: str) -> TaskInfo:
    """A task of the workspace with this id and name (no labels, the default priority)."""
    return TaskInfo(task_id="t", workspace_id=workspace_id, workspace_name=workspace_name)


def errors(text: str) -> list[str]:
    with pytest.raises(RoutingError) as caught:
        parse_routing(text, "routes.toml")
    return caught.value.problems


def test_durations() -> None:
    assert [parse_duration(v) for v in ("90s", "15m", "2h", "1d")] == [90, 900, 7200, 86400]
    for bad in ("15", "m", "0m", "1.5h", "15 min", "-1s", "1w", ""):
        with pytest.raises(ValueError, match="not a duration"):
            parse_duration(bad)
    assert [describe_duration(s) for s in (45, 900, 3600, 5400, 86400)] == [
        "45 s",
        "15 min",
        "1 h",
        "1 h 30 min",
        "1 d",
    ]


def test_routes_take_each_absent_key_from_the_defaults() -> None:
    routing = parse_routing(GOOD, "routes.toml")
    platform = routing.route_for(ws("ws-p", "Platform"))
    quiet = routing.route_for(ws("ws-q", "Quiet"))
    other = routing.route_for(ws("ws-o", "Other"))
    assert platform is not None and quiet is not None and other is not None
    assert platform.followups == FollowUps(
        remind_after=90,
        remind_every=1800,
        max_reminders=2,
        mention=("S0ONCALL", "U0ANA"),
        escalate_after=3600,
        escalate_to="U0LEAD",
        escalate_mention=("S0LEADS",),
    )
    assert quiet.followups == other.followups == routing.default_followups
    assert other.followups.remind_after == 900 and other.followups.escalate_to is None


def test_reminder_steps_and_escalation_age() -> None:
    f = FollowUps(remind_after=10, remind_every=5, max_reminders=3, escalate_after=30)
    assert [f.reminders_due(age) for age in (0, 9.9, 10, 14, 15, 20, 99)] == [0, 0, 1, 1, 2, 3, 3]
    assert [f.reminder_age(step) for step in (1, 2, 3)] == [10, 15, 20]
    assert not f.escalation_due(99)  # no target
    once = FollowUps(remind_after=10)
    assert once.reminders_due(1000) == 1
    assert mentions(("S0ONCALL", "U0ANA")) == "<!subteam^S0ONCALL> <@U0ANA>"


def test_mistakes_are_errors_naming_their_line() -> None:
    text = """\
[defaults]
channel = "C0DEFAULT"
remind_every = "30m"
remind_after = "soon"

[[route]]
workspace = "Platform"
escalate_to = "S0LEADS"
max_reminders = 0
mention = ["ana"]
remnd_after = "1m"
"""
    found = errors(text)
    assert found[0].startswith("routes.toml, line 4: remind_after: 'soon' is not a duration")
    assert any(
        e.startswith("routes.toml, line 8: escalate_to: 'S0LEADS' is a user group") for e in found
    )
    assert any(e.startswith("routes.toml, line 9: max_reminders") for e in found)
    assert any(e.startswith("routes.toml, line 10: mention: 'ana' is a name") for e in found)
    assert any(e.startswith("routes.toml, line 11: unknown key 'remnd_after'") for e in found)


def test_keys_that_need_another_key_name_their_line() -> None:
    text = """\
[defaults]
channel = "C0DEFAULT"
remind_every = "30m"

[[route]]
workspace = "Platform"
escalate_after = "1h"

[[route]]
workspace = "Mobile"
escalate_to = "C0LEADS"
mention = ["S0ONCALL"]
"""
    assert errors(text) == [
        "routes.toml, line 3: remind_every needs remind_after (when the first reminder is sent)",
        "routes.toml, line 7: escalate_after needs escalate_to (a channel id, or a user id for "
        "a direct message)",
        "routes.toml, line 11: escalate_to needs escalate_after",
        "routes.toml, line 12: mention is who reminders notify; it needs remind_after",
    ]


def test_a_direct_message_conversation_or_a_name_is_not_an_escalation_target() -> None:
    for bad, says in (("D0DM", "direct-message"), ("#leads", "channel name"), ("x", "not a")):
        text = f'[defaults]\nchannel = "C0A"\nescalate_after = "1h"\nescalate_to = "{bad}"\n'
        (problem,) = errors(text)
        assert problem.startswith("routes.toml, line 4: escalate_to:") and says in problem


def test_routing_says_whether_any_route_asks_for_follow_ups() -> None:
    assert parse_routing(GOOD, "routes.toml").any_followups
    quiet = parse_routing('[defaults]\nchannel = "C0DEFAULT"\n\n[[route]]\nworkspace = "Q"\n', "r")
    assert not quiet.any_followups
    escalating = parse_routing(
        '[defaults]\nchannel = "C0D"\n\n[[route]]\nworkspace = "P"\n'
        'escalate_after = "1h"\nescalate_to = "C0LEADS"\n',
        "r",
    )
    assert escalating.any_followups
    assert not FollowUps().any
    assert FollowUps(remind_after=60).any


def test_quiet_hours_per_route_and_from_the_defaults() -> None:
    from datetime import time

    routing = parse_routing(
        """\
[defaults]
channel = "C0DEFAULT"
quiet_hours = "19:00-08:00"
quiet_tz = "Europe/Berlin"

[[route]]
workspace = "Night"
quiet_hours = "22:00-06:30"

[[route]]
workspace = "Utc"
quiet_tz = "UTC"
""",
        "routes.toml",
    )
    quiet = routing.default_followups.quiet
    assert quiet is not None and (quiet.start, quiet.end, quiet.tz) == (
        time(19),
        time(8),
        "Europe/Berlin",
    )
    night = routing.rules[0].followups.quiet
    assert night is not None and (night.start, night.end, night.tz) == (
        time(22),
        time(6, 30),
        "Europe/Berlin",
    )
    utc = routing.rules[1].followups.quiet
    assert utc is not None and (utc.start, utc.tz) == (time(19), "UTC")


def test_bad_quiet_hours_name_themselves_and_their_line() -> None:
    found = errors(
        """\
[defaults]
channel = "C0DEFAULT"
quiet_hours = "25:00-08:00"

[[route]]
workspace = "A"
quiet_hours = "19:00-08:00"
quiet_tz = "Europe/Berlinn"

[[route]]
workspace = "B"
quiet_hours = "7pm"
"""
    )
    assert any(
        e.startswith("routes.toml, line 3: quiet_hours: '25:00-08:00' has a time") for e in found
    )
    assert any(
        e.startswith("routes.toml, line 8: quiet_tz: 'Europe/Berlinn' is not a time zone")
        for e in found
    )
    assert any(e.startswith("routes.toml, line 12: quiet_hours: '7pm' is not a") for e in found)
    alone = errors('[defaults]\nchannel = "C0DEFAULT"\nquiet_tz = "UTC"\n')
    assert alone[0].startswith("routes.toml, line 3: quiet_tz is the time zone of quiet hours")
