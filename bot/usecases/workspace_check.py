"""The routing file's workspaces, checked against the workspaces Kandev knows.

Checked once Kandev is reachable: at start-up (a mistake there stops the bot) or, when Kandev
was down then, by its own worker until the check could be made (a mistake then is reported in
``/healthz``).
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from bot.config.routing import Routing
from bot.kandev.errors import KandevError
from bot.kandev.models import Workspace
from bot.ops.health import Health

log = logging.getLogger(__name__)


class Workspaces(Protocol):
    """What the check reads from Kandev (bot.kandev.client.KandevClient)."""

    def workspaces(self) -> list[Workspace]: ...


class WorkspaceCheck:
    def __init__(self, routing: Routing, kandev: Workspaces, health: Health) -> None:
        self.routing = routing
        self.kandev = kandev
        self.health = health
        self.done = False

    def check(self) -> list[str]:
        """The routing file's problems against Kandev's workspaces (raises KandevError)."""
        problems = self.routing.validate_workspaces(self.kandev.workspaces())
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
