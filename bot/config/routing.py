"""Where each workspace's questions go, and who may answer them (the KANDEV_SLACK_CONFIG file).

The file format (TOML)::

    [defaults]
    channel = "C0DEFAULT"          # else KANDEV_SLACK_CHANNEL
    answerers = []                 # user ids (U…/W…) or user-group ids (S…); empty = anyone

    [[route]]
    priority = ["critical"]        # any of these priorities (low, medium, high, critical)
    channel = "C0ONCALL"
    answerers = ["S0ONCALL"]

    [[route]]
    workspace = "Platform"         # Kandev workspace name or id
    labels = ["database"]          # every one of these labels on the task
    channel = "C0PLATFORM"         # optional: else the default channel
    answerers = ["U0ANA", "S0ONCALL"]  # optional: else the default answerers

A route names at least one criterion (workspace, labels, priority); every criterion it names must
match; the first matching route wins, else the defaults apply.

Everything here is pure except :func:`load_routing`, which reads the file. Every problem names
the file and line it comes from.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from bot.config.followups import DEFAULT_MAX_REMINDERS, FollowUps, parse_duration
from bot.core.domain import TaskInfo
from bot.kandev.models import DEFAULT_PRIORITY, PRIORITIES, Workspace

CHANNEL_ID = re.compile(r"^[CG][A-Z0-9]{2,}$")
DIRECT_MESSAGE_ID = re.compile(r"^D[A-Z0-9]{2,}$")
USER_ID = re.compile(r"^[UW][A-Z0-9]{2,}$")
USER_GROUP_ID = re.compile(r"^S[A-Z0-9]{2,}$")


def channel_id_problem(value: str) -> str | None:
    """Why ``value`` is not the id of a channel cards can go to, or None when it is one.

    Direct-message conversations (D…) are refused: posting there needs the ``im:*`` scopes and
    ``conversations.open``, which the app does not ask for.
    """
    if CHANNEL_ID.match(value):
        return None
    if DIRECT_MESSAGE_ID.match(value):
        return (
            f"'{value}' is a direct-message conversation; the bot posts cards only in channels: "
            "use a public or private channel id (C…/G…) and invite the bot there"
        )
    if value.startswith("#") or not value[:1].isupper():
        return (
            f"'{value}' is a channel name, not a channel id; use the id (C…/G…), shown at the "
            "bottom of the channel's details in Slack"
        )
    return f"'{value}' is not a Slack channel id (C… or G… followed by capitals and digits)"


def answerer_id_problem(value: str) -> str | None:
    """Why ``value`` is not a Slack user id or user-group id, or None when it is one."""
    if USER_ID.match(value) or USER_GROUP_ID.match(value):
        return None
    if value.startswith("@") or not value[:1].isupper():
        return (
            f"'{value}' is a name, not an id; use a user id (U…/W…, profile ⋮ → Copy member ID) "
            "or a user-group id (S…)"
        )
    return f"'{value}' is neither a Slack user id (U…/W…) nor a user-group id (S…)"


class RoutingError(Exception):
    """The routing file cannot be used; ``problems`` lists every reason, each naming its line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


# ---- the routing model the app uses ------------------------------------------------------


class Route(BaseModel):
    """Where one workspace's cards go and who may act on them."""

    model_config = ConfigDict(frozen=True)

    channel: str
    answerers: frozenset[str] = frozenset()
    followups: FollowUps = FollowUps()  # reminders and escalation

    @property
    def user_group_ids(self) -> frozenset[str]:
        """The user-group ids (S…) among the answerers: membership must be looked up."""
        return frozenset(a for a in self.answerers if USER_GROUP_ID.match(a))

    def may_answer(self, user_id: str, user_group_ids: Iterable[str] = ()) -> bool:
        """Whether this Slack user (a member of ``user_group_ids``) may answer or reject.

        An empty answerer list means anyone in the channel may.
        """
        if not self.answerers:
            return True
        return user_id in self.answerers or not self.answerers.isdisjoint(user_group_ids)


class RouteRule(BaseModel):
    """One ``[[route]]`` table, resolved against the defaults. ``labels`` and ``priorities``
    are casefolded; an empty criterion is not checked."""

    model_config = ConfigDict(frozen=True)

    workspace: str | None = None
    labels: frozenset[str] = frozenset()
    priorities: frozenset[str] = frozenset()
    channel: str | None
    answerers: frozenset[str]
    line: int
    followups: FollowUps = FollowUps()

    @property
    def workspace_only(self) -> bool:
        """Matches every task of its workspace (no label or priority criterion)."""
        return self.workspace is not None and not self.labels and not self.priorities

    def matches(self, workspace_id: str, workspace_name: str) -> bool:
        """Whether the rule's workspace criterion (if any) matches this workspace."""
        if self.workspace is None:
            return True
        return self.workspace == workspace_id or (
            bool(workspace_name) and self.workspace.casefold() == workspace_name.casefold()
        )

    def matches_task(
        self,
        workspace_id: str,
        workspace_name: str,
        labels: Iterable[str] = (),
        priority: str = "",
    ) -> bool:
        """Every criterion the rule names matches: its workspace, all its labels present, the
        task's priority (default medium) one of its priorities."""
        if not self.matches(workspace_id, workspace_name):
            return False
        if self.labels and not self.labels <= {label.casefold() for label in labels}:
            return False
        return not self.priorities or (priority or DEFAULT_PRIORITY).casefold() in self.priorities

    def describe(self) -> str:
        """``route at line 7 (workspace 'Platform', labels database)`` for ``check``."""
        criteria = []
        if self.workspace is not None:
            criteria.append(f"workspace '{self.workspace}'")
        if self.labels:
            criteria.append("labels " + ", ".join(sorted(self.labels)))
        if self.priorities:
            criteria.append("priority " + " or ".join(sorted(self.priorities)))
        return f"route at line {self.line} ({'; '.join(criteria)})"


class Routing(BaseModel):
    """The whole routing table: defaults plus per-workspace rules (first match wins)."""

    model_config = ConfigDict(frozen=True)

    default_channel: str | None = None
    default_answerers: frozenset[str] = frozenset()
    default_followups: FollowUps = FollowUps()
    rules: tuple[RouteRule, ...] = ()
    source: str = ""

    @property
    def any_followups(self) -> bool:
        """Whether any route (or the defaults) asks for reminders or an escalation."""
        return self.default_followups.any or any(rule.followups.any for rule in self.rules)

    def route_for(
        self,
        workspace_id: str,
        workspace_name: str = "",
        *,
        labels: Iterable[str] = (),
        priority: str = "",
    ) -> Route | None:
        """The route of a task in this workspace (matched by id, or by name ignoring case)
        with these labels and priority: the first rule whose every criterion matches.

        None only when no rule matches and no default channel is configured: then the
        question has nowhere to go (start-up reports this for known workspaces).
        """
        rule = self.rule_for(workspace_id, workspace_name, labels=labels, priority=priority)
        if rule is not None:
            channel = rule.channel or self.default_channel
            if not channel:
                return None
            return Route(channel=channel, answerers=rule.answerers, followups=rule.followups)
        if self.default_channel is None:
            return None
        return Route(
            channel=self.default_channel,
            answerers=self.default_answerers,
            followups=self.default_followups,
        )

    def rule_for(
        self,
        workspace_id: str,
        workspace_name: str = "",
        *,
        labels: Iterable[str] = (),
        priority: str = "",
    ) -> RouteRule | None:
        """The first rule that matches (None: the defaults apply)."""
        labels = tuple(labels)
        for rule in self.rules:
            if rule.matches_task(workspace_id, workspace_name, labels, priority):
                return rule
        return None

    def route_for_task(self, task: TaskInfo) -> Route | None:
        """The route of a task (its workspace, labels and priority)."""
        return self.route_for(
            task.workspace_id, task.workspace_name, labels=task.labels, priority=task.priority
        )

    def rule_for_task(self, task: TaskInfo) -> RouteRule | None:
        return self.rule_for(
            task.workspace_id, task.workspace_name, labels=task.labels, priority=task.priority
        )

    def channels(self) -> list[str]:
        """Every channel cards can go to (default first), without duplicates."""
        found = [self.default_channel] if self.default_channel else []
        found += [r.channel for r in self.rules if r.channel]
        return list(dict.fromkeys(found))

    def validate_workspaces(self, workspaces: Sequence[Workspace]) -> list[str]:
        """Problems of this routing against the workspaces Kandev knows (empty = all good)."""
        problems: list[str] = []
        where = f"{self.source}, " if self.source else ""
        for rule in self.rules:
            if rule.workspace is None:
                continue
            hits = [w for w in workspaces if rule.matches(w.id, w.name)]
            if not hits:
                known = ", ".join(f"'{w.name}' ({w.id})" for w in workspaces) or "none"
                problems.append(
                    f"{where}line {rule.line}: workspace '{rule.workspace}' is not a Kandev "
                    f"workspace name or id (Kandev has: {known})"
                )
            elif len(hits) > 1:
                ids = ", ".join(w.id for w in hits)
                problems.append(
                    f"{where}line {rule.line}: workspace '{rule.workspace}' matches "
                    f"{len(hits)} Kandev workspaces ({ids}); use the workspace id instead"
                )
        if self.default_channel is None:
            for w in workspaces:
                catch_all = next(
                    (r for r in self.rules if r.workspace_only and r.matches(w.id, w.name)), None
                )
                if catch_all is None or catch_all.channel is None:
                    problems.append(
                        f"Kandev workspace '{w.name}' ({w.id}) has no Slack channel: add a "
                        "[[route]] with a channel for it, or set [defaults] channel or "
                        "KANDEV_SLACK_CHANNEL"
                    )
        return problems


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


ChannelId = Annotated[str, AfterValidator(_check_channel)]
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


# ---- finding lines in the text -----------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*(?:\.|=)""")


class _LineIndex:
    """Where tables and keys are in a TOML text (tomllib does not keep positions)."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.tables: dict[str, list[int]] = {}  # "defaults" / "route" -> header lines
        self.keys: dict[tuple[str, int, str], int] = {}  # (table, index, key) -> line
        table, index = "", 0
        in_multiline = False
        for number, raw in enumerate(self.lines, start=1):
            line = raw.split("#", 1)[0] if '"' not in raw and "'" not in raw else raw
            quotes = raw.count('"""') + raw.count("'''")
            if in_multiline:
                in_multiline = quotes % 2 == 0
                continue
            if (header := _HEADER.match(line)) and "=" not in line.split("]", 1)[0]:
                table = header.group(2).strip().strip("\"'")
                self.tables.setdefault(table, []).append(number)
                index = len(self.tables[table]) - 1
            elif key := _KEY.match(line):
                self.keys.setdefault((table, index, key.group(1).strip("\"'")), number)
            in_multiline = quotes % 2 == 1

    def table_line(self, table: str, index: int = 0) -> int | None:
        lines = self.tables.get(table, [])
        return lines[index] if index < len(lines) else None

    def key_line(self, table: str, index: int, key: str) -> int | None:
        return self.keys.get((table, index, key))

    def value_line(self, start: int, value: str) -> int:
        """The first line at or after ``start`` where the quoted ``value`` appears."""
        for number in range(start, len(self.lines) + 1):
            text = self.lines[number - 1]
            if f'"{value}"' in text or f"'{value}'" in text:
                return number
        return start

    def locate(self, loc: tuple[int | str, ...]) -> int:
        """The best line for a pydantic error location within the routing file."""
        if not loc:
            return 1
        table = str(loc[0])
        index = loc[1] if table == "route" and len(loc) > 1 and isinstance(loc[1], int) else 0
        rest = loc[2:] if table == "route" else loc[1:]
        fallback = self.table_line(table, index) or self.key_line("", 0, table) or 1
        if not rest:
            return fallback
        return self.key_line(table, index, str(rest[0])) or fallback


def _where(source: str, line: int) -> str:
    return f"{source}, line {line}" if source else f"line {line}"


def _describe(error: ErrorDetails, index: _LineIndex, source: str) -> tuple[int, str]:
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
}


def parse_routing(text: str, source: str = "", fallback_channel: str | None = None) -> Routing:
    """Parse the routing file's text. Raises RoutingError listing every problem with its line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = re.search(r"\(at line (\d+), column \d+\)", message)
        line = int(match.group(1)) if match else 1
        message = message[: match.start()].strip() if match else message
        raise RoutingError([f"{_where(source, line)}: not valid TOML: {message}"]) from None
    index = _LineIndex(text)
    empty = _empty_routes(data, index, source)
    try:
        parsed = _RoutingFile.model_validate(data)
    except ValidationError as exc:
        described = sorted(empty + [_describe(e, index, source) for e in exc.errors()])
        raise RoutingError([text for _, text in described]) from None
    if empty:
        raise RoutingError([text for _, text in sorted(empty)])

    problems: list[str] = []
    rules: list[RouteRule] = []
    seen: dict[tuple[str | None, frozenset[str], frozenset[str]], int] = {}
    defaults_answerers = frozenset(parsed.defaults.answerers)
    default_followups = _followups(
        parsed.defaults, None, _key_lines(index, "defaults", 0, source), problems
    )
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
        followups = _followups(route, parsed.defaults, lines, problems)
        rules.append(
            RouteRule(
                workspace=route.workspace,
                labels=labels,
                priorities=priorities,
                channel=route.channel,
                answerers=answerers,
                line=line,
                followups=followups,
            )
        )
    if problems:
        raise RoutingError(problems)
    return Routing(
        default_channel=parsed.defaults.channel or fallback_channel,
        default_answerers=defaults_answerers,
        default_followups=default_followups,
        rules=tuple(rules),
        source=source,
    )


_CRITERIA = ("workspace", "labels", "priority")


def _empty_routes(data: dict, index: _LineIndex, source: str) -> list[tuple[int, str]]:
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


def _key_lines(index: _LineIndex, table: str, number: int, source: str):
    """``where(key)``: "file, line N" of ``key`` in that table (else the table's header)."""
    header = index.table_line(table, number) or 1

    def where(key: str) -> str:
        return _where(source, index.key_line(table, number, key) or header)

    return where


def _line_of(problem: str) -> int:
    match = re.search(r"line (\d+):", problem)
    return int(match.group(1)) if match else 0


def _followups(
    table: _FollowUpsFile, defaults: _FollowUpsFile | None, where, problems: list[str]
) -> FollowUps:
    """A table's reminder and escalation keys, each absent one taken from ``defaults``;
    keys that make no sense together are added to ``problems``, naming the line (in line
    order)."""
    found: list[str] = []

    def pick(key: str):
        own = getattr(table, key)
        return getattr(defaults, key) if own is None and defaults is not None else own

    remind_after, remind_every = pick("remind_after"), pick("remind_every")
    escalate_after, escalate_to = pick("escalate_after"), pick("escalate_to")
    if table.remind_every is not None and remind_after is None:
        found.append(
            f"{where('remind_every')}: remind_every needs remind_after (when the first "
            "reminder is sent)"
        )
    if table.max_reminders is not None and remind_after is None:
        found.append(f"{where('max_reminders')}: max_reminders needs remind_after")
    if table.mention is not None and remind_after is None:
        found.append(f"{where('mention')}: mention is who reminders notify; it needs remind_after")
    if table.escalate_after is not None and escalate_to is None:
        found.append(
            f"{where('escalate_after')}: escalate_after needs escalate_to (a channel id, or a "
            "user id for a direct message)"
        )
    if table.escalate_to is not None and escalate_after is None:
        found.append(f"{where('escalate_to')}: escalate_to needs escalate_after")
    if table.escalate_mention is not None and escalate_to is None:
        found.append(f"{where('escalate_mention')}: escalate_mention needs escalate_to")
    problems += sorted(found, key=_line_of)
    max_reminders = pick("max_reminders")
    return FollowUps(
        remind_after=parse_duration(remind_after) if remind_after else None,
        remind_every=parse_duration(remind_every) if remind_every else None,
        max_reminders=max_reminders if max_reminders is not None else DEFAULT_MAX_REMINDERS,
        mention=tuple(pick("mention") or ()),
        escalate_after=parse_duration(escalate_after) if escalate_after else None,
        escalate_to=escalate_to,
        escalate_mention=tuple(pick("escalate_mention") or ()),
    )


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
