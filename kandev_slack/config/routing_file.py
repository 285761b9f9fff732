"""The routing file (KANDEV_SLACK_CONFIG, TOML) read into
:class:`~kandev_slack.config.routing.Routing`:
the file as written (pydantic, strict), and every problem found in it named with its file and
line. The format is described in kandev_slack/config/routing.py.

Everything here is pure except :func:`load_routing`, which reads the file.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from kandev_slack.config.followups import DEFAULT_MAX_REMINDERS, FollowUps, parse_duration
from kandev_slack.config.routing import (
    USER_GROUP_ID,
    USER_ID,
    RouteRule,
    Routing,
    RoutingError,
    answerer_id_problem,
    channel_id_problem,
)
from kandev_slack.config.toml_lines import LineIndex
from kandev_slack.core.claims import DEFAULT_CLAIM_FOR_S
from kandev_slack.core.timing.digest import DEFAULT_TZ, parse_time_of_day
from kandev_slack.core.timing.digest import zone as digest_zone
from kandev_slack.core.timing.quiet import QuietError, QuietHours, parse_range, zone
from kandev_slack.kandev.models import PRIORITIES

# ---- the file as written (pydantic, strict) ----------------------------------------------


def _check_channel(value: str) -> str:
    if problem := channel_id_problem(value):
        raise ValueError(problem)
    return value


def _check_answerer(value: str) -> str:
    if problem := answerer_id_problem(value):
        raise ValueError(problem)
    return value


def _check_duration(value: str) -> str:
    parse_duration(value)
    return value


def escalation_target_problem(value: str) -> str | None:
    """Why ``value`` cannot be escalated to (a channel id, or a user id for a DM), or None."""
    if USER_ID.match(value):
        return None
    if USER_GROUP_ID.match(value):
        return (
            f"'{value}' is a user group; escalate to a channel id (C…/G…) or a user id "
            "(U…/W…), and name the group in escalate_mention"
        )
    problem = channel_id_problem(value)
    if problem is None:
        return None
    return f"{problem} — or a user id (U…/W…) for a direct message"


def _check_escalation_target(value: str) -> str:
    if problem := escalation_target_problem(value):
        raise ValueError(problem)
    return value


def quiet_problem(error: QuietError) -> str:
    """What is wrong with a quiet-hours range or time zone, for the routing file."""
    if error.problem == "tz":
        return (
            f"'{error.value}' is not a time zone; write an IANA name such as "
            '"Europe/Berlin", "America/New_York" or "UTC"'
        )
    if error.problem == "empty":
        return f"'{error.value}' starts and ends at the same time; write two different times"
    if error.problem == "clock":
        return f"'{error.value}' has a time that does not exist; use 00:00 to 23:59"
    return f"'{error.value}' is not a range; write two times such as \"19:00-08:00\" (HH:MM-HH:MM)"


def _check_quiet_hours(value: str) -> str:
    try:
        parse_range(value)
    except QuietError as exc:
        raise ValueError(quiet_problem(exc)) from None
    return value


def _check_tz(value: str) -> str:
    try:
        zone(value)
    except QuietError as exc:
        raise ValueError(quiet_problem(exc)) from None
    return value


def _check_digest_time(value: str) -> str:
    if parse_time_of_day(value) is None:
        raise ValueError(f"'{value}' is not a time of day; write HH:MM, 24-hour, such as \"09:00\"")
    return value


def _check_zone(value: str) -> str:
    if digest_zone(value) is None:
        raise ValueError(
            f'\'{value}\' is not a time zone; use an IANA name such as "Europe/Berlin" or "UTC"'
        )
    return value


ChannelId = Annotated[str, AfterValidator(_check_channel)]
QuietRange = Annotated[str, AfterValidator(_check_quiet_hours)]
TimeZone = Annotated[str, AfterValidator(_check_tz)]
DigestTime = Annotated[str, AfterValidator(_check_digest_time)]
Zone = Annotated[str, AfterValidator(_check_zone)]
AnswererId = Annotated[str, AfterValidator(_check_answerer)]
Duration = Annotated[str, AfterValidator(_check_duration)]
EscalationTarget = Annotated[str, AfterValidator(_check_escalation_target)]


class _FollowUpsFile(BaseModel):
    """The reminder and escalation keys, allowed in [defaults] and in each [[route]]."""

    model_config = ConfigDict(extra="forbid", strict=True)

    remind_after: Duration | None = None
    remind_every: Duration | None = None
    max_reminders: int | None = Field(default=None, ge=1)
    mention: list[AnswererId] | None = None
    escalate_after: Duration | None = None
    escalate_to: EscalationTarget | None = None
    escalate_mention: list[AnswererId] | None = None
    claim_for: Duration | None = None  # how long "I'm on it" pauses the follow-ups
    quiet_hours: QuietRange | None = None  # when reminders, escalations and DM cards wait
    quiet_tz: TimeZone | None = None  # the time zone of quiet_hours (default UTC)
    digest: DigestTime | None = None  # the channel digest's time of day (HH:MM)
    digest_tz: Zone | None = None  # its time zone (default UTC)
    #: Whose Kandev account a Slack person's clicks are made with: "bot" (the bot's token,
    #: the default), "linked" (their own token when linked, else the bot's), "required" (only
    #: linked people may answer, reject, skip, approve or claim).
    identity: Literal["bot", "linked", "required"] | None = None
    #: DM the task's Kandev assignee (when linked) its items, and mention them in reminders.
    notify_assignee: bool | None = None


class _DefaultsFile(_FollowUpsFile):
    channel: ChannelId | None = None
    answerers: list[AnswererId] = Field(default_factory=list)


def _check_priority(value: str) -> str:
    if value.casefold() not in PRIORITIES:
        raise ValueError(f"'{value}' is not a Kandev priority (one of {', '.join(PRIORITIES)})")
    return value


def _check_label(value: str) -> str:
    if not value.strip():
        raise ValueError("an empty label matches no task; remove it")
    return value


Priority = Annotated[str, AfterValidator(_check_priority)]
Label = Annotated[str, AfterValidator(_check_label)]


class _RouteFile(_FollowUpsFile):
    workspace: str | None = Field(default=None, min_length=1)
    labels: list[Label] | None = Field(default=None, min_length=1)
    priority: list[Priority] | None = Field(default=None, min_length=1)
    channel: ChannelId | None = None
    answerers: list[AnswererId] | None = None


class _RoutingFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    defaults: _DefaultsFile = Field(default_factory=_DefaultsFile)
    route: list[_RouteFile] = Field(default_factory=list)


_FOLLOWUP_KEYS = ", ".join(_FollowUpsFile.model_fields)
_ALLOWED = {
    (): "defaults, route",
    ("defaults",): f"channel, answerers, {_FOLLOWUP_KEYS}",
    ("route",): f"workspace, labels, priority, channel, answerers, {_FOLLOWUP_KEYS}",
}


def _where(source: str, line: int) -> str:
    return f"{source}, line {line}" if source else f"line {line}"


def _describe(error: ErrorDetails, index: LineIndex, source: str) -> tuple[int, str]:
    """One pydantic error as (line, "file, line N: what is wrong and how to fix it")."""
    loc = tuple(error["loc"])
    line = index.locate(loc)
    names = [str(p) for p in loc if not isinstance(p, int)]
    name = names[-1] if names else "value"
    section = "top level"
    if len(names) > 1:
        section = "[[route]]" if names[0] == "route" else "[defaults]"
    kind = error["type"]
    if kind == "extra_forbidden":
        allowed = _ALLOWED.get(tuple(names[:-1]), "")
        message = f"unknown key '{name}' in {section}; allowed: {allowed}"
    elif kind == "missing":
        message = f"[[route]] needs '{name}' (a Kandev workspace name or id)"
    elif kind == "value_error":
        message = f"{name}: {error['ctx']['error'] if 'ctx' in error else error['msg']}"
        bad = re.search(r"'([^']*)'", message)
        if name in ("answerers", "priority", "mention", "escalate_mention") and bad:
            line = index.value_line(line, bad.group(1))
    elif kind == "too_short":
        message = f"{name} in {section} is an empty list; list at least one value or remove it"
    else:
        message = f"{name} in {section} should be {_EXPECTED.get(name, 'another type')}"
    return line, f"{_where(source, line)}: {message}"


_EXPECTED = {
    "labels": "a list of label strings",
    "priority": "a list of priorities (low, medium, high, critical)",
    "channel": "a channel id string",
    "answerers": "a list of id strings",
    "workspace": "a non-empty string",
    "defaults": "a table [defaults]",
    "route": "tables [[route]]",
    "remind_after": 'a duration string such as "15m"',
    "remind_every": 'a duration string such as "30m"',
    "escalate_after": 'a duration string such as "1h"',
    "max_reminders": "a whole number, at least 1",
    "mention": "a list of id strings",
    "escalate_mention": "a list of id strings",
    "escalate_to": "a channel id or user id string",
    "claim_for": 'a duration string such as "30m"',
    "quiet_hours": 'a range string such as "19:00-08:00"',
    "quiet_tz": 'a time zone string such as "Europe/Berlin"',
    "digest": 'a time of day string such as "09:00"',
    "digest_tz": 'a time zone string such as "Europe/Berlin"',
    "identity": 'one of "bot", "linked" or "required"',
    "notify_assignee": "true or false",
}


def parse_routing(text: str, source: str = "", fallback_channel: str | None = None) -> Routing:
    """Parse the routing file's text. Raises RoutingError listing every problem with its line."""
    data = _read_toml(text, source)
    index = LineIndex(text)
    empty = _empty_routes(data, index, source)
    try:
        parsed = _RoutingFile.model_validate(data)
    except ValidationError as exc:
        described = sorted(empty + [_describe(e, index, source) for e in exc.errors()])
        raise RoutingError([text for _, text in described]) from None
    if empty:
        raise RoutingError([text for _, text in sorted(empty)])

    problems: list[str] = []
    default_followups = _followups(
        parsed.defaults, None, _key_lines(index, "defaults", 0, source), problems
    )
    default_where = _key_lines(index, "defaults", 0, source)
    default_digest = _digest(parsed.defaults, default_where, problems)
    rules = _rules(parsed, index, source, problems)
    _digest_clashes(default_digest, parsed.defaults.channel or fallback_channel, rules, problems)
    if problems:
        raise RoutingError(problems)
    return Routing(
        default_channel=parsed.defaults.channel or fallback_channel,
        default_answerers=frozenset(parsed.defaults.answerers),
        default_followups=default_followups,
        default_digest=default_digest,
        default_identity=parsed.defaults.identity or "bot",
        default_notify_assignee=bool(parsed.defaults.notify_assignee),
        rules=tuple(rules),
        source=source,
    )


def _read_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = re.search(r"\(at line (\d+), column \d+\)", message)
        line = int(match.group(1)) if match else 1
        message = message[: match.start()].strip() if match else message
        raise RoutingError([f"{_where(source, line)}: not valid TOML: {message}"]) from None


def _rules(
    parsed: _RoutingFile, index: LineIndex, source: str, problems: list[str]
) -> list[RouteRule]:
    """The file's routes in order; a route repeating another's criteria is a problem."""
    rules: list[RouteRule] = []
    seen: dict[tuple[str | None, frozenset[str], frozenset[str]], int] = {}
    defaults_answerers = frozenset(parsed.defaults.answerers)
    for number, route in enumerate(parsed.route):
        line = index.table_line("route", number) or 1
        labels = frozenset(label.casefold() for label in route.labels or ())
        priorities = frozenset(p.casefold() for p in route.priority or ())
        workspace = route.workspace.casefold() if route.workspace is not None else None
        key = (workspace, labels, priorities)
        if key in seen:
            what = (
                f"workspace '{route.workspace}' already has a route"
                if workspace is not None and not labels and not priorities
                else "the same criteria already have a route"
            )
            problems.append(f"{_where(source, line)}: {what} (line {seen[key]}); merge them")
            continue
        seen[key] = line
        answerers = defaults_answerers if route.answerers is None else frozenset(route.answerers)
        lines = _key_lines(index, "route", number, source)
        rules.append(
            RouteRule(
                workspace=route.workspace,
                labels=labels,
                priorities=priorities,
                channel=route.channel,
                answerers=answerers,
                line=line,
                followups=_followups(route, parsed.defaults, lines, problems),
                digest=_digest(route, lines, problems),
                identity=route.identity or parsed.defaults.identity or "bot",
                notify_assignee=_first_set(route.notify_assignee, parsed.defaults.notify_assignee),
            )
        )
    return rules


def _first_set(own: bool | None, default: bool | None) -> bool:
    return bool(default) if own is None else own


_CRITERIA = ("workspace", "labels", "priority")


def _empty_routes(data: dict[str, Any], index: LineIndex, source: str) -> list[tuple[int, str]]:
    """Routes that name no criterion (they would match every task): one problem each."""
    routes = data.get("route")
    if not isinstance(routes, list):
        return []
    found = []
    for number, route in enumerate(routes):
        if isinstance(route, dict) and not any(key in route for key in _CRITERIA):
            line = index.table_line("route", number) or 1
            found.append(
                (
                    line,
                    f"{_where(source, line)}: [[route]] needs at least one criterion: "
                    "'workspace' (a Kandev workspace name or id), 'labels' or 'priority'",
                )
            )
    return found


Where = Callable[[str], str]


def _key_lines(index: LineIndex, table: str, number: int, source: str) -> Where:
    """``where(key)``: "file, line N" of ``key`` in that table (else the table's header)."""
    header = index.table_line(table, number) or 1

    def where(key: str) -> str:
        return _where(source, index.key_line(table, number, key) or header)

    return where


def _line_of(problem: str) -> int:
    match = re.search(r"line (\d+):", problem)
    return int(match.group(1)) if match else 0


#: Follow-up keys that make sense only with another: (key, the key it needs, how it is said).
_NEEDS = (
    ("remind_every", "remind_after", ""),
    ("max_reminders", "remind_after", ""),
    ("mention", "remind_after", "is who reminders notify; it needs"),
    ("escalate_after", "escalate_to", ""),
    ("escalate_to", "escalate_after", ""),
    ("escalate_mention", "escalate_to", ""),
    ("quiet_tz", "quiet_hours", "is the time zone of quiet hours; it needs"),
)
_NEEDED_FOR = {
    "remind_every": " (when the first reminder is sent)",
    "escalate_after": " (a channel id, or a user id for a direct message)",
}


def _followups(
    table: _FollowUpsFile, defaults: _FollowUpsFile | None, where: Where, problems: list[str]
) -> FollowUps:
    """A table's reminder and escalation keys, each absent one taken from ``defaults``;
    keys that make no sense together are added to ``problems``, naming the line (in line
    order)."""
    found: list[str] = []

    def pick(key: str) -> Any:
        own = getattr(table, key)
        return getattr(defaults, key) if own is None and defaults is not None else own

    remind_after, remind_every = pick("remind_after"), pick("remind_every")
    escalate_after, escalate_to = pick("escalate_after"), pick("escalate_to")
    for key, needed, why in _NEEDS:
        if getattr(table, key) is not None and pick(needed) is None:
            found.append(f"{where(key)}: {key} {why or 'needs'} {needed}{_NEEDED_FOR.get(key, '')}")
    problems += sorted(found, key=_line_of)
    max_reminders, claim_for = pick("max_reminders"), pick("claim_for")
    return FollowUps(
        remind_after=parse_duration(remind_after) if remind_after else None,
        remind_every=parse_duration(remind_every) if remind_every else None,
        max_reminders=max_reminders if max_reminders is not None else DEFAULT_MAX_REMINDERS,
        mention=tuple(pick("mention") or ()),
        escalate_after=parse_duration(escalate_after) if escalate_after else None,
        escalate_to=escalate_to,
        escalate_mention=tuple(pick("escalate_mention") or ()),
        claim_for=parse_duration(claim_for) if claim_for else DEFAULT_CLAIM_FOR_S,
        quiet=_quiet(pick("quiet_hours"), pick("quiet_tz")),
    )


def _quiet(hours: str | None, tz: str | None) -> QuietHours | None:
    """The quiet hours (both keys checked already; a missing time zone is UTC)."""
    if hours is None:
        return None
    start, end = parse_range(hours)
    return QuietHours(start, end, tz or "UTC")


def _digest(table: _FollowUpsFile, where: Where, problems: list[str]) -> tuple[str, str] | None:
    """A table's channel digest (HH:MM, zone), or None; ``digest_tz`` alone is a problem."""
    if table.digest is None:
        if table.digest_tz is not None:
            problems.append(f"{where('digest_tz')}: digest_tz needs digest (the time of day)")
        return None
    return table.digest, table.digest_tz or DEFAULT_TZ


def _digest_clashes(
    default: tuple[str, str] | None,
    default_channel: str | None,
    rules: list[RouteRule],
    problems: list[str],
) -> None:
    """Two routes asking the same channel for digests at different times."""
    seen: dict[str, tuple[tuple[str, str], str]] = {}
    if default is not None and default_channel:
        seen[default_channel] = (default, "[defaults]")
    for rule in rules:
        channel = rule.channel or default_channel
        if rule.digest is None or not channel:
            continue
        if channel in seen and seen[channel][0] != rule.digest:
            problems.append(
                f"{rule.describe()}: digest differs from the one {seen[channel][1]} sets for "
                f"channel {channel}; a channel has one digest"
            )
        seen.setdefault(channel, (rule.digest, f"the route at line {rule.line}"))


def load_routing(path: str | Path | None, fallback_channel: str | None = None) -> Routing:
    """Read and parse the routing file; without a path, route everything to the fallback."""
    if path is None:
        return Routing(default_channel=fallback_channel)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RoutingError([f"{path}: file not found"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RoutingError([f"{path}: cannot be read ({exc.__class__.__name__}: {exc})"]) from None
    return parse_routing(text, str(path), fallback_channel)
