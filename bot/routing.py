"""Where each workspace's questions go, and who may answer them (the KANDEV_SLACK_CONFIG file).

The file format (TOML)::

    [defaults]
    channel = "C0DEFAULT"          # else KANDEV_SLACK_CHANNEL
    answerers = []                 # user ids (U…/W…) or user-group ids (S…); empty = anyone

    [[route]]
    workspace = "Platform"         # Kandev workspace name or id
    channel = "C0PLATFORM"         # optional: else the default channel
    answerers = ["U0ANA", "S0ONCALL"]  # optional: else the default answerers

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

from bot.followup_config import DEFAULT_MAX_REMINDERS, FollowUps, parse_duration
from bot.kandev.models import Workspace

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
    """One ``[[route]]`` table, resolved against the defaults."""

    model_config = ConfigDict(frozen=True)

    workspace: str
    channel: str | None
    answerers: frozenset[str]
    line: int
    followups: FollowUps = FollowUps()

    def matches(self, workspace_id: str, workspace_name: str) -> bool:
        return self.workspace == workspace_id or (
            bool(workspace_name) and self.workspace.casefold() == workspace_name.casefold()
        )


class Routing(BaseModel):
    """The whole routing table: defaults plus per-workspace rules (first match wins)."""

    model_config = ConfigDict(frozen=True)

    default_channel: str | None = None
    default_answerers: frozenset[str] = frozenset()
    default_followups: FollowUps = FollowUps()
    rules: tuple[RouteRule, ...] = ()
    source: str = ""

    def route_for(self, workspace_id: str, workspace_name: str = "") -> Route | None:
        """The route for a workspace (matched by id, or by name ignoring case).

        None only when no rule matches and no default channel is configured: then the
        workspace's questions have nowhere to go (start-up reports this for known workspaces).
        """
        for rule in self.rules:
            if rule.matches(workspace_id, workspace_name):
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
                if self.route_for(w.id, w.name) is None:
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


class _RouteFile(_FollowUpsFile):
    workspace: str = Field(min_length=1)
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
    ("route",): f"workspace, channel, answerers, {_FOLLOWUP_KEYS}",
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


def _describe(error: dict, index: _LineIndex, source: str) -> tuple[int, str]:
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
        if name in ("answerers", "mention", "escalate_mention") and bad:
            line = index.value_line(line, bad.group(1))
    else:
        message = f"{name} in {section} should be {_EXPECTED.get(name, 'another type')}"
    return line, f"{_where(source, line)}: {message}"


_EXPECTED = {
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
    try:
        parsed = _RoutingFile.model_validate(data)
    except ValidationError as exc:
        described = sorted(_describe(e, index, source) for e in exc.errors())
        raise RoutingError([text for _, text in described]) from None

    problems: list[str] = []
    rules: list[RouteRule] = []
    seen: dict[str, int] = {}
    defaults_answerers = frozenset(parsed.defaults.answerers)
    default_followups = _followups(
        parsed.defaults, None, _key_lines(index, "defaults", 0, source), problems
    )
    for number, route in enumerate(parsed.route):
        line = index.table_line("route", number) or 1
        key = route.workspace.casefold()
        if key in seen:
            problems.append(
                f"{_where(source, line)}: workspace '{route.workspace}' already has a route "
                f"(line {seen[key]}); merge them"
            )
            continue
        seen[key] = line
        answerers = defaults_answerers if route.answerers is None else frozenset(route.answerers)
        lines = _key_lines(index, "route", number, source)
        followups = _followups(route, parsed.defaults, lines, problems)
        rules.append(
            RouteRule(
                workspace=route.workspace,
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
