"""`kandev-slack check`: verify Kandev, the Slack tokens and the channels before running (the
Slack part: check_slack.py).

Each check yields :class:`Finding` lines; nothing here prints. No finding ever carries a token:
every detail passes through :func:`redact` with the configured secrets.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy.exc import SQLAlchemyError

from kandev_slack.commands.check_slack import slack_findings
from kandev_slack.commands.findings import CheckReport, Finding, exception_text, links_line
from kandev_slack.config.routing import Routing
from kandev_slack.config.settings import Mode, Settings
from kandev_slack.core.clarification import Bundle
from kandev_slack.kandev.approvals.wire import PermissionCandidate, PermissionRequest
from kandev_slack.kandev.models import KandevUser, ProbeResult, Task, Workspace
from kandev_slack.ops.redaction import redact
from kandev_slack.ops.vault import SECRET_KEY_SETTING, VaultError
from kandev_slack.store import Database, StoreError
from kandev_slack.store.sql.url import is_sqlite_memory, normalize_url
from kandev_slack.usecases.intake.workspace_check import routing_problems
from kandev_slack.usecases.tasks import TaskDirectory, TaskUnknown


class PermissionsCheck(Protocol):
    """The permission calls the check makes
    (kandev_slack.kandev.approvals.client.PermissionsClient)."""

    def candidates(self, workspace_id: str) -> list[PermissionCandidate]: ...

    def list_pending(
        self, task_id: str, session_id: str | None = None
    ) -> list[PermissionRequest]: ...


class KandevCheckTarget(Protocol):
    """What the check needs from the Kandev client."""

    def probe(self) -> ProbeResult: ...

    def workspaces(self) -> list[Workspace]: ...

    def member_account(self) -> KandevUser | None: ...

    def list_pending(self) -> list[Bundle]: ...

    def task(self, task_id: str) -> Task: ...

    @property
    def permissions(self) -> PermissionsCheck: ...


# ---- Kandev -------------------------------------------------------------------------------


def kandev_findings(kandev: KandevCheckTarget, settings: Settings) -> list[Finding]:
    """Reachability, readiness, auth, MCP and version of Kandev, then the routes' workspaces."""
    url = settings.kandev_url
    try:
        probe = kandev.probe()
    except Exception as exc:  # the check reports any failure as a finding, never a traceback
        return [Finding(False, "kandev reachable", f"{url}: {exception_text(exc)}")]
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
    found += approval_findings(kandev, settings.routing, each=True)
    return found


def routing_findings(kandev: KandevCheckTarget, routing: Routing) -> list[Finding]:
    """Whether every route names a known workspace (and every workspace has a channel)."""
    if not routing.rules and routing.default_channel:
        return []
    try:
        problems = routing_problems(routing, kandev)
    except Exception as exc:  # reported as a finding
        return [Finding(False, "routing", f"cannot list Kandev workspaces: {exception_text(exc)}")]
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
        return [Finding(False, "waiting questions", f"cannot list: {exception_text(exc)}")]
    items = [(f"question {b.pending_id}", b.task_id) for b in bundles]
    return _routes_of(kandev, routing, items, "question", each=each)


def approval_findings(
    kandev: KandevCheckTarget, routing: Routing, *, each: bool = False
) -> list[Finding]:
    """The same for the tool-permission requests waiting (approvals): every task a
    workspace flags ``permission``, confirmed by its own list."""
    try:
        items = [
            (f"approval {request.request_id}", request.task_id)
            for workspace in kandev.workspaces()
            for candidate in kandev.permissions.candidates(workspace.id)
            for request in kandev.permissions.list_pending(candidate.task_id)
        ]
    except Exception as exc:  # reported as a finding
        return [Finding(False, "waiting approvals", f"cannot list: {exception_text(exc)}")]
    return _routes_of(kandev, routing, items, "approval", each=each)


def _routes_of(
    kandev: KandevCheckTarget,
    routing: Routing,
    items: list[tuple[str, str]],
    noun: str,
    *,
    each: bool,
) -> list[Finding]:
    """Where each waiting item — (its name, its task id) — goes, counted by channel."""
    tasks = TaskDirectory(kandev)  # type: ignore[arg-type]
    routed: dict[str, int] = {}
    unroutable: dict[str, int] = {}
    lines: list[Finding] = []
    for name, task_id in items:
        try:
            task = tasks.info(task_id)
        except Exception as exc:  # TaskUnknown, or Kandev failing: reported, never raised
            reason = exc.reason if isinstance(exc, TaskUnknown) else exception_text(exc)
            unroutable[reason] = unroutable.get(reason, 0) + 1
            lines.append(Finding(False, name, f"task {task_id}: not routed: {reason}"))
            continue
        route = routing.route_for(task)
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
    waiting = f"{len(items)} waiting" + (f": {where}" if where else "")
    found = [Finding(True, f"waiting {noun}s", waiting)]
    if unroutable:
        count = sum(unroutable.values())
        what = f"{noun} cannot" if count == 1 else f"{noun}s cannot"
        why = "; ".join(f"{reason} ({n})" for reason, n in sorted(unroutable.items()))
        found.append(Finding(False, "unroutable", f"{count} {what} be routed: {why}"))
    return found + (lines if each else [])


def _route_name(routing: Routing, task: Any) -> str:
    """Which part of the routing sends ``task``'s questions where they go (by its workspace,
    labels and priority)."""
    rule = routing.rule_for(task)
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


# ---- the people's own Kandev accounts --------------------------------------------------------

#: The schema version that stores the links (alembic/versions/v0019).
LINKS_SCHEMA_VERSION = 19


def links_findings(settings: Settings) -> list[Finding]:
    """How many people are linked to their Kandev account and how many links are broken, read
    from the database (never changed: no migration, no file created), when a route acts with
    the people's own tokens or KANDEV_SLACK_SECRET_KEY is set; and the stored tokens no key of
    it opens. Never a token."""
    if not settings.routing.needs_tokens and settings.kandev_slack_secret_key is None:
        return []
    name = "kandev links"
    url = normalize_url(settings.database_url)
    sqlite_file = url.get_backend_name() == "sqlite" and not is_sqlite_memory(url)
    if sqlite_file and not Path(url.database or "").exists():
        return [Finding(True, name, f"{links_line(0, 0)}; the database does not exist yet")]
    vault = settings.vault()
    try:
        with Database(url, upgrade=False, vault=vault) as store:
            version = store.schema_version()
            if version < LINKS_SCHEMA_VERSION:
                return [
                    Finding(
                        True,
                        name,
                        f"{links_line(0, 0)}; the database's schema is version {version}: "
                        "`kandev-slack db upgrade` (or `run`) adds the links",
                        warning=True,
                    )
                ]
            linked, broken = store.links.counts()
            unread = sum(not link.token for link in store.links.all_links()) if vault else 0
    except (SQLAlchemyError, StoreError, OSError, VaultError) as exc:
        return [Finding(False, name, f"cannot read the database: {exception_text(exc)}")]
    found = [Finding(True, name, links_line(linked, broken), warning=broken > 0)]
    if unread:
        found.append(
            Finding(
                True,
                "kandev tokens",
                f"{unread} stored token(s) sealed under a key no longer in "
                f"{SECRET_KEY_SETTING}: put that key back after the newest, or those people "
                "connect again",
                warning=True,
            )
        )
    return found


# ---- everything ---------------------------------------------------------------------------


def run_checks(
    settings: Settings,
    mode: Mode,
    kandev: KandevCheckTarget | None,
    *,
    slack: bool = True,
    store: bool = True,
) -> list[Finding]:
    """All findings, Kandev first, with every secret redacted from every detail. Kandev is
    left out when ``kandev`` is None, Slack when not ``slack``, the database's links when not
    ``store`` (settings they need are bad)."""
    findings = kandev_findings(kandev, settings) if kandev is not None else []
    if slack:
        findings += slack_findings(settings, mode)
    if store:
        findings += links_findings(settings)
    secrets = settings.secret_values()
    return [replace(f, detail=redact(f.detail, secrets)) for f in findings]


def report_json(report: CheckReport) -> str:
    """The check report for scripts: ``ok`` (everything needed to run is fine), the
    configuration problems, every finding and the failure count the text report ends with."""
    document = {
        "ok": report.ok,
        "configuration_problems": report.problems,
        "findings": [
            {"status": f.status, "ok": f.ok, "name": f.name, "detail": f.detail}
            for f in report.findings
        ],
        "failed": report.failed,
        "checks": report.total,
        "summary": report.summary(),
    }
    return json.dumps(document, indent=2, ensure_ascii=False)
