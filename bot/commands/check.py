"""`kandev-slack check`: verify Kandev, the Slack tokens and the channels before running.

Each check yields :class:`Finding` lines; nothing here prints. No finding ever carries a token:
every detail passes through :func:`redact` with the configured secrets.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.config.routing import USER_ID, Routing
from bot.config.settings import Mode, Settings
from bot.kandev.models import Bundle, ProbeResult, Task, Workspace
from bot.ops.redaction import redact
from bot.usecases.tasks import TaskDirectory, TaskUnknown

SLACK_TIMEOUT = 10


@dataclass(frozen=True)
class Finding:
    """One line of the check report. ``warning`` marks an ok line that could not be verified."""

    ok: bool
    name: str
    detail: str
    warning: bool = False

    @property
    def status(self) -> str:
        if not self.ok:
            return "FAIL"
        return "warn" if self.warning else "ok"

    def line(self) -> str:
        return f"{self.status:<5}{self.name:<24} {self.detail}".rstrip()


class KandevCheckTarget(Protocol):
    """What the check needs from the Kandev client."""

    def probe(self) -> ProbeResult: ...

    def workspaces(self) -> list[Workspace]: ...

    def list_pending(self) -> list[Bundle]: ...

    def task(self, task_id: str) -> Task: ...


# ---- Kandev -------------------------------------------------------------------------------


def kandev_findings(kandev: KandevCheckTarget, settings: Settings) -> list[Finding]:
    """Reachability, readiness, auth, MCP and version of Kandev, then the routes' workspaces."""
    url = settings.kandev_url
    try:
        probe = kandev.probe()
    except Exception as exc:  # the check reports any failure as a finding, never a traceback
        return [Finding(False, "kandev reachable", f"{url}: {_exception_text(exc)}")]
    if not probe.reachable:
        return [Finding(False, "kandev reachable", probe.detail or f"cannot reach {url}")]
    found = [Finding(True, "kandev reachable", url)]
    if not probe.ready:
        found.append(Finding(False, "kandev ready", probe.detail or "Kandev is not ready yet"))
        return found
    found.append(Finding(True, "kandev ready", "the API answers"))
    if probe.auth_ok is False:
        which = "the token set was refused" if probe.token_sent else "no KANDEV_TOKEN is set"
        found.append(
            Finding(
                False,
                "kandev auth",
                f"KANDEV_TOKEN missing or invalid (Kandev answered 401; {which}); mint a "
                "personal access token in Kandev and put it in KANDEV_TOKEN",
            )
        )
        return found
    if probe.auth_ok is None:
        found.append(Finding(False, "kandev api", probe.detail or "unexpected answer"))
        return found
    how = "KANDEV_TOKEN accepted" if probe.token_sent else "no token needed (auth is off)"
    found.append(Finding(True, "kandev auth", how))
    if probe.mcp_ok is False:
        found.append(Finding(False, "kandev mcp", probe.detail or "the MCP endpoint failed"))
        return found
    found.append(Finding(True, "kandev mcp", "session initialised"))
    if probe.version:
        found.append(Finding(True, "kandev version", probe.version))
    else:
        found.append(Finding(True, "kandev version", "not reported by this server", warning=True))
    found += routing_findings(kandev, settings.routing)
    found += waiting_findings(kandev, settings.routing, each=True)
    return found


def routing_findings(kandev: KandevCheckTarget, routing: Routing) -> list[Finding]:
    """Whether every route names a known workspace (and every workspace has a channel)."""
    if not routing.rules and routing.default_channel:
        return []
    try:
        workspaces = kandev.workspaces()
    except Exception as exc:  # reported as a finding
        return [Finding(False, "routing", f"cannot list Kandev workspaces: {_exception_text(exc)}")]
    problems = routing.validate_workspaces(workspaces)
    if problems:
        return [Finding(False, "routing", p) for p in problems]
    count = len(routing.rules)
    return [Finding(True, "routing", f"{count} route(s) match Kandev workspaces")]


def waiting_findings(
    kandev: KandevCheckTarget, routing: Routing, *, each: bool = False
) -> list[Finding]:
    """Where the questions waiting in Kandev go, and which cannot be routed and why (the
    bot does not post those anywhere until their task and workspace can be read); with
    ``each``, also one line per question: its task and the route it takes."""
    try:
        bundles = kandev.list_pending()
    except Exception as exc:  # reported as a finding
        return [Finding(False, "waiting questions", f"cannot list: {_exception_text(exc)}")]
    tasks = TaskDirectory(kandev)  # type: ignore[arg-type]
    routed: dict[str, int] = {}
    unroutable: dict[str, int] = {}
    lines: list[Finding] = []
    for bundle in bundles:
        name = f"question {bundle.pending_id}"
        try:
            task = tasks.info(bundle.task_id)
        except Exception as exc:  # TaskUnknown, or Kandev failing: reported, never raised
            reason = exc.reason if isinstance(exc, TaskUnknown) else _exception_text(exc)
            unroutable[reason] = unroutable.get(reason, 0) + 1
            lines.append(Finding(False, name, f"task {bundle.task_id}: not routed: {reason}"))
            continue
        route = routing.route_for_task(task)
        workspace = repr(task.workspace_name or task.workspace_id)
        about = f"{task.title or task.task_id!r} in workspace {workspace}"
        if route is None:
            reason = f"no channel for workspace {workspace}"
            unroutable[reason] = unroutable.get(reason, 0) + 1
            lines.append(Finding(False, name, f"{about}: not routed: {reason}"))
        else:
            routed[route.channel] = routed.get(route.channel, 0) + 1
            lines.append(
                Finding(True, name, f"{about} → {route.channel} ({_route_name(routing, task)})")
            )
    where = ", ".join(f"{n} to {channel}" for channel, n in sorted(routed.items()))
    found = [
        Finding(
            True, "waiting questions", f"{len(bundles)} waiting" + (f": {where}" if where else "")
        )
    ]
    if unroutable:
        count = sum(unroutable.values())
        what = "question cannot" if count == 1 else "questions cannot"
        why = "; ".join(f"{reason} ({n})" for reason, n in sorted(unroutable.items()))
        found.append(Finding(False, "unroutable", f"{count} {what} be routed: {why}"))
    return found + (lines if each else [])


def _route_name(routing: Routing, task: Any) -> str:
    """Which part of the routing sends ``task``'s questions where they go (by its workspace,
    labels and priority)."""
    rule = routing.rule_for_task(task)
    if rule is None:
        return "the default channel"
    where = f" ({routing.source}:{rule.line})" if routing.source else ""
    criteria = []
    if rule.labels:
        criteria.append("labels " + ", ".join(sorted(rule.labels)))
    if rule.priorities:
        criteria.append("priority " + " or ".join(sorted(rule.priorities)))
    named = " ".join(x for x in (rule.workspace, "; ".join(criteria)) if x)
    return f"[[route]] {named}{where}"


# ---- Slack --------------------------------------------------------------------------------


def _scopes(response: Any) -> set[str] | None:
    headers = {k.lower(): v for k, v in (getattr(response, "headers", None) or {}).items()}
    raw = headers.get("x-oauth-scopes")
    if raw is None:
        return None
    if isinstance(raw, list):
        raw = ",".join(raw)
    return {s.strip() for s in str(raw).split(",") if s.strip()}


def _slack_error(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        data = exc.response.data if isinstance(exc.response.data, dict) else {}
        error = data.get("error") or f"HTTP {exc.response.status_code}"
        needed = data.get("needed")
        return f"{error} (needs scope {needed})" if needed else str(error)
    return _exception_text(exc)


def _exception_text(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return text if len(text) <= 300 else text[:297] + "…"


_TOKEN_REFUSED = {
    "invalid_auth",
    "not_authed",
    "token_revoked",
    "account_inactive",
    "token_expired",
}


def slack_findings(
    settings: Settings, mode: Mode, make_client: Callable[[str], WebClient] | None = None
) -> list[Finding]:
    """auth.test with the bot token, the app token (Socket Mode), and every configured channel."""
    client_for = make_client or (
        lambda token: WebClient(token=token, base_url=settings.slack_api_url, timeout=SLACK_TIMEOUT)
    )
    bot = client_for(settings.slack_bot_token.get_secret_value())
    try:
        auth = bot.auth_test()
    except SlackApiError as exc:
        error = _slack_error(exc)
        fix = (
            "; copy the Bot User OAuth Token (xoxb-…) again into SLACK_BOT_TOKEN"
            if error in _TOKEN_REFUSED
            else ""
        )
        return [Finding(False, "slack auth", f"Slack refused SLACK_BOT_TOKEN: {error}{fix}")]
    except (SlackClientError, OSError) as exc:
        return [
            Finding(
                False,
                "slack auth",
                f"cannot reach SLACK_API_URL {settings.slack_api_url}: {_slack_error(exc)}",
            )
        ]
    bot_name = auth.get("user") or "the bot"
    found = [
        Finding(
            True,
            "slack auth",
            f"team {auth.get('team', '?')} ({auth.get('team_id', '?')}), "
            f"bot @{bot_name} ({auth.get('user_id', '?')})",
        )
    ]
    scopes = _scopes(auth)
    if scopes is not None:
        if "chat:write" in scopes:
            found.append(Finding(True, "slack scopes", ", ".join(sorted(scopes))))
        else:
            found.append(
                Finding(
                    False,
                    "slack scopes",
                    "the bot token lacks chat:write; add it under OAuth & Permissions and "
                    "reinstall the app",
                )
            )
    found += _app_token_findings(settings, mode, client_for)
    for channel in settings.routing.channels():
        found.append(_channel_finding(bot, channel, scopes, bot_name))
    found += escalation_findings(bot, settings.routing, scopes, bot_name)
    return found


def escalation_targets(routing: Routing) -> list[str]:
    """Every ``escalate_to`` of the routing file (channels and people), without duplicates."""
    every = [routing.default_followups, *(rule.followups for rule in routing.rules)]
    return list(dict.fromkeys(f.escalate_to for f in every if f.escalate_to))


def escalation_findings(
    bot: WebClient, routing: Routing, scopes: set[str] | None, bot_name: str
) -> list[Finding]:
    """Whether the bot can post to every escalation channel, open a DM with every escalation
    person, and open DMs at all (subscribers' DM cards need ``im:write``)."""
    found: list[Finding] = []
    routed = set(routing.channels())
    people = []
    for target in escalation_targets(routing):
        if USER_ID.match(target):
            people.append(target)
        elif target not in routed:
            found.append(_channel_finding(bot, target, scopes, bot_name))
    for person in people:
        found.append(_dm_finding(bot, person))
    if scopes is not None:
        if "im:write" in scopes:
            found.append(Finding(True, "slack direct messages", "can open DMs (im:write)"))
        else:
            found.append(
                Finding(
                    not people,
                    "slack direct messages",
                    "the bot token lacks im:write: subscribers' DM cards and escalation to a "
                    "person cannot be sent; add it under OAuth & Permissions and reinstall",
                    warning=not people,
                )
            )
    return found


def _dm_finding(bot: WebClient, user_id: str) -> Finding:
    name = f"slack escalation {user_id}"
    try:
        bot.conversations_open(users=user_id)
    except SlackApiError as exc:
        return Finding(False, name, f"cannot open a DM with {user_id}: {_slack_error(exc)}")
    except (SlackClientError, OSError) as exc:
        return Finding(False, name, f"conversations.open failed: {_slack_error(exc)}")
    return Finding(True, name, f"can open a DM with {user_id}")


def _app_token_findings(
    settings: Settings, mode: Mode, client_for: Callable[[str], WebClient]
) -> list[Finding]:
    if settings.slack_app_token is None:
        return [
            Finding(
                True,
                "slack mode",
                f"HTTP mode: Slack must reach POST /slack/events on this server (PORT "
                f"{settings.port}); set SLACK_APP_TOKEN for Socket Mode",
            )
        ]
    found = [Finding(True, "slack app token", "SLACK_APP_TOKEN is an app-level token (xapp-…)")]
    if mode != "socket":
        found.append(Finding(True, "slack mode", "HTTP mode (--http): SLACK_APP_TOKEN is unused"))
        return found
    app_token = settings.slack_app_token.get_secret_value()
    try:
        client_for(app_token).apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        error = _slack_error(exc)
        fix = {
            "invalid_auth": "; create a new app-level token and put it in SLACK_APP_TOKEN",
            "not_allowed_token_type": "; SLACK_APP_TOKEN must be an app-level token (xapp-…)",
        }.get(error, "")
        if error.startswith("missing_scope"):
            fix = "; give the app-level token the connections:write scope"
        found.append(
            Finding(False, "slack socket mode", f"apps.connections.open refused: {error}{fix}")
        )
    except (SlackClientError, OSError) as exc:
        found.append(
            Finding(
                False, "slack socket mode", f"apps.connections.open failed: {_slack_error(exc)}"
            )
        )
    else:
        found.append(
            Finding(True, "slack socket mode", "apps.connections.open works with SLACK_APP_TOKEN")
        )
    return found


def _channel_finding(
    bot: WebClient, channel_id: str, scopes: set[str] | None, bot_name: str
) -> Finding:
    name = f"slack channel {channel_id}"
    try:
        info = bot.conversations_info(channel=channel_id)
    except SlackApiError as exc:
        error = _slack_error(exc)
        if error.startswith("missing_scope"):
            return Finding(
                True,
                name,
                f"not verified: the bot token lacks the scope to read channels ({error}); "
                f"make sure @{bot_name} is a member",
                warning=True,
            )
        if error == "channel_not_found":
            return Finding(
                False,
                name,
                f"channel not found (or it is private and @{bot_name} is not in it); check the "
                f"id, then /invite @{bot_name}",
            )
        return Finding(False, name, f"conversations.info failed: {error}")
    except (SlackClientError, OSError) as exc:
        return Finding(False, name, f"conversations.info failed: {_slack_error(exc)}")
    data = info.get("channel") or {}
    label = f"#{data['name']}" if data.get("name") else channel_id
    if data.get("is_archived"):
        return Finding(False, name, f"{label} is archived; unarchive it or pick another channel")
    if data.get("is_member"):
        return Finding(True, name, f"{label}: @{bot_name} is a member and can post")
    if not data.get("is_private") and scopes is not None and "chat:write.public" in scopes:
        return Finding(True, name, f"{label}: not a member, can post (chat:write.public)")
    return Finding(False, name, f"{label}: @{bot_name} is not a member; /invite @{bot_name} there")


# ---- everything ---------------------------------------------------------------------------


def run_checks(
    settings: Settings, mode: Mode, kandev: KandevCheckTarget | None, *, slack: bool = True
) -> list[Finding]:
    """All findings, Kandev first, with every secret redacted from every detail. Kandev is
    left out when ``kandev`` is None, Slack when not ``slack`` (settings they need are bad)."""
    findings = kandev_findings(kandev, settings) if kandev is not None else []
    if slack:
        findings += slack_findings(settings, mode)
    secrets = settings.secret_values()
    return [replace(f, detail=redact(f.detail, secrets)) for f in findings]


def report_json(findings: list[Finding], problems: list[str]) -> str:
    """The check report for scripts: ``ok`` (everything needed to run is fine), the
    configuration problems and every finding."""
    failed = [f for f in findings if not f.ok]
    document = {
        "ok": not failed and not problems,
        "configuration_problems": problems,
        "findings": [
            {"status": f.status, "ok": f.ok, "name": f.name, "detail": f.detail} for f in findings
        ],
        "failed": len(failed) + len(problems),
    }
    return json.dumps(document, indent=2, ensure_ascii=False)
