"""The routing file's workspaces, checked against the workspaces Kandev knows.

Checked once Kandev is reachable: at start-up (a mistake there stops the bot) or, when Kandev
was down then, by its own worker until the check could be made (a mistake then is reported in
``/healthz``).
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from kandev_slack.config.routing import Routing
from kandev_slack.core.exitcodes import EXIT_CONFIG, EXIT_FAILED, StartupError
from kandev_slack.kandev.errors import KandevError, KandevUnavailable
from kandev_slack.kandev.models import KandevUser, Workspace
from kandev_slack.ops.health import Health

log = logging.getLogger(__name__)


class Workspaces(Protocol):
    """What the check reads from Kandev (kandev_slack.kandev.client.KandevClient)."""

    def workspaces(self) -> list[Workspace]: ...

    def member_account(self) -> KandevUser | None:
        """The bot's own Kandev account when Kandev has accounts (auth on), else None."""
        ...


def routing_problems(routing: Routing, kandev: Workspaces) -> list[str]:
    """The routing file's problems against the workspaces the bot's Kandev account sees. With
    auth on, Kandev lists only the workspaces that account is a member of: a route naming
    another one says whose account its owner must add (raises KandevError when Kandev cannot
    list them)."""
    workspaces = kandev.workspaces()
    problems = routing.validate_workspaces(workspaces)
    if not problems:
        return problems
    account = kandev.member_account()  # asked only when something is wrong
    if account is None:
        return problems
    return routing.validate_workspaces(workspaces, bot=account)


class WorkspaceCheck:
    def __init__(self, routing: Routing, kandev: Workspaces, health: Health) -> None:
        self.routing = routing
        self.kandev = kandev
        self.health = health
        self.done = False

    def check(self) -> list[str]:
        """The routing file's problems against Kandev's workspaces (raises KandevError)."""
        problems = routing_problems(self.routing, self.kandev)
        self.done = True
        if problems:
            self.health.problem("routing", "; ".join(problems))
        else:
            self.health.clear("routing")
        return problems

    def run(self, stop: threading.Event, interval_s: float) -> None:
        """Retry the check every ``interval_s`` seconds until it could be made."""
        while not self.done and not stop.wait(interval_s):
            try:
                self.check()
            except KandevError as exc:
                log.warning("routing not checked yet (Kandev: %s)", exc)


def check_at_start(check: WorkspaceCheck, health: Health) -> None:
    """Check the routing file's workspaces now if Kandev answers (a mistake stops the bot)."""
    try:
        problems = check.check()
    except KandevUnavailable as exc:
        log.warning("Kandev is not reachable at start-up (%s); will keep trying", exc)
        health.failure("kandev", "unreachable", exc)
        health.problem("routing", "workspaces not validated yet (Kandev unreachable)")
        return
    except KandevError as exc:
        raise StartupError(EXIT_FAILED, f"kandev-slack: {exc}") from exc
    if problems:
        lines = [f"  {problem}" for problem in problems]
        raise StartupError(EXIT_CONFIG, "kandev-slack: configuration problems:", *lines)
