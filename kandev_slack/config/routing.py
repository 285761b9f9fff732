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

This module is the routing model the app uses (pure); reading the file, with every problem
naming the file and line it comes from, is kandev_slack/config/routing_file.py
(:func:`load_routing`,
:func:`parse_routing`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kandev_slack.config.followups import FollowUps
from kandev_slack.core.domain import TaskInfo
from kandev_slack.kandev.models import DEFAULT_PRIORITY, KandevUser, Workspace

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


#: Whose Kandev account a Slack person's clicks are made with (``identity`` in the file):
#: "bot" (the bot's token), "linked" (their own token when they linked one, else the bot's),
#: "required" (only people who linked their Kandev account may act).
IdentityMode = Literal["bot", "linked", "required"]


class RoutingError(Exception):
    """The routing file cannot be used; ``problems`` lists every reason, each naming its line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


# ---- the routing model the app uses ------------------------------------------------------


class ChannelDigest(BaseModel):
    """A route's channel digest: what waits in ``channel``, posted there on weekdays at ``at``
    (HH:MM) in the zone ``tz`` (an IANA name)."""

    model_config = ConfigDict(frozen=True)

    channel: str
    at: str
    tz: str


class Route(BaseModel):
    """Where one workspace's cards go and who may act on them."""

    model_config = ConfigDict(frozen=True)

    channel: str
    answerers: frozenset[str] = frozenset()
    followups: FollowUps = FollowUps()  # reminders and escalation
    identity: IdentityMode = "bot"  # whose Kandev account clicks are made with
    notify_assignee: bool = False  # DM the task's linked assignee, mention them in reminders

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
    #: ``digest`` / ``digest_tz``: (HH:MM, zone) of the channel digest, or None.
    digest: tuple[str, str] | None = None
    identity: IdentityMode = "bot"
    notify_assignee: bool = False

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


#: What a task's route depends on: its workspace (id, name), labels and priority.
RouteInputs = tuple[str, str, tuple[str, ...], str]


class Routing(BaseModel):
    """The whole routing table: defaults plus per-workspace rules (first match wins)."""

    model_config = ConfigDict(frozen=True)

    default_channel: str | None = None
    default_answerers: frozenset[str] = frozenset()
    default_followups: FollowUps = FollowUps()
    #: The default channel's digest (``digest`` / ``digest_tz`` in [defaults]), or None.
    default_digest: tuple[str, str] | None = None
    default_identity: IdentityMode = "bot"
    default_notify_assignee: bool = False
    rules: tuple[RouteRule, ...] = ()
    source: str = ""

    def channel_digests(self) -> list[ChannelDigest]:
        """Every channel digest the routes ask for, one per channel (the first that names it;
        the file is refused when two differ)."""
        found: dict[str, ChannelDigest] = {}
        if self.default_digest is not None and self.default_channel:
            at, tz = self.default_digest
            found[self.default_channel] = ChannelDigest(channel=self.default_channel, at=at, tz=tz)
        for rule in self.rules:
            channel = rule.channel or self.default_channel
            if rule.digest is not None and channel and channel not in found:
                at, tz = rule.digest
                found[channel] = ChannelDigest(channel=channel, at=at, tz=tz)
        return list(found.values())

    @property
    def needs_tokens(self) -> bool:
        """Whether any route acts with people's own Kandev tokens (identity linked/required):
        then tokens are stored, and a secret key to encrypt them is required."""
        modes = {self.default_identity, *(rule.identity for rule in self.rules)}
        return bool(modes - {"bot"})

    @property
    def any_followups(self) -> bool:
        """Whether any route (or the defaults) asks for reminders or an escalation."""
        return self.default_followups.any or any(rule.followups.any for rule in self.rules)

    def route_for(self, task: TaskInfo) -> Route | None:
        """The route of a task (its workspace, matched by id or by name ignoring case, labels
        and priority): the first rule whose every criterion matches.

        None only when no rule matches and no default channel is configured: then the
        question has nowhere to go (start-up reports this for known workspaces).
        """
        rule = self.rule_for(task)
        if rule is not None:
            channel = rule.channel or self.default_channel
            if not channel:
                return None
            return Route(
                channel=channel,
                answerers=rule.answerers,
                followups=rule.followups,
                identity=rule.identity,
                notify_assignee=rule.notify_assignee,
            )
        if self.default_channel is None:
            return None
        return Route(
            channel=self.default_channel,
            answerers=self.default_answerers,
            followups=self.default_followups,
            identity=self.default_identity,
            notify_assignee=self.default_notify_assignee,
        )

    @staticmethod
    def inputs_of(task: TaskInfo) -> RouteInputs:
        """Everything of ``task`` that :meth:`route_for` reads: tasks equal in these have one
        route."""
        return task.workspace_id, task.workspace_name, tuple(task.labels), task.priority

    def rule_for(self, task: TaskInfo) -> RouteRule | None:
        """The first rule that matches (None: the defaults apply)."""
        for rule in self.rules:
            if rule.matches_task(
                task.workspace_id, task.workspace_name, task.labels, task.priority
            ):
                return rule
        return None

    def channels(self) -> list[str]:
        """Every channel cards can go to (default first), without duplicates."""
        found = [self.default_channel] if self.default_channel else []
        found += [r.channel for r in self.rules if r.channel]
        return list(dict.fromkeys(found))

    def validate_workspaces(
        self, workspaces: Sequence[Workspace], *, bot: KandevUser | None = None
    ) -> list[str]:
        """Problems of this routing against the workspaces Kandev knows (empty = all good).

        ``bot``: the bot's own Kandev account, when Kandev has accounts (auth on). Then
        ``workspaces`` are only those it is a member of (Kandev's workspaces are private to
        their owner and members; an admin sees no more), so a route naming another one is
        told who must add the bot there."""
        problems: list[str] = []
        where = f"{self.source}, " if self.source else ""
        for rule in self.rules:
            if rule.workspace is None:
                continue
            hits = [w for w in workspaces if rule.matches(w.id, w.name)]
            if not hits:
                known = ", ".join(f"'{w.name}' ({w.id})" for w in workspaces) or "none"
                if bot is not None:
                    problems.append(
                        f"{where}line {rule.line}: workspace '{rule.workspace}' is not one the "
                        f"bot's Kandev account can see (it sees: {known}); Kandev workspaces "
                        f"are private to their members: its owner must add {_account(bot)} as "
                        "a member; viewer is enough (or fix the name or id)"
                    )
                    continue
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


def _account(user: KandevUser) -> str:
    """A Kandev account as its owner would find it in Kandev's member list: its display
    name and email."""
    name = user.display_name or user.email or user.id
    return f"{name} ({user.email})" if user.email and user.email != name else name
