"""What a card shows about a bundle's task: its title, workspace, agent, priority and labels,
read from Kandev.

Shared by discovery (a new card needs its task, and its task decides its route) and the
waiting queue (a bundle listed before its card exists). The Kandev client caches tasks and
workspaces, so a lookup is cheap.

The task decides who sees and answers a question, so a lookup that fails is never guessed:
:class:`TaskUnknown` says why, and the caller waits and retries (fail closed).
"""

from __future__ import annotations

import logging

from kandev_slack.core.domain import TaskInfo
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevError

log = logging.getLogger(__name__)


class TaskUnknown(Exception):
    """The task or its workspace cannot be determined; ``reason`` is short and safe to show."""

    def __init__(self, task_id: str, reason: str) -> None:
        super().__init__(f"task {task_id}: {reason}")
        self.task_id = task_id
        self.reason = reason


class TaskDirectory:
    def __init__(self, kandev: KandevClient) -> None:
        self.kandev = kandev

    def info(self, task_id: str) -> TaskInfo:
        """The task's title and workspace. Raises TaskUnknown when Kandev does not say (any
        error, unreachable included, or a workspace it does not list to the bot)."""
        try:
            task = self.kandev.task(task_id)
        except KandevError as exc:
            log.warning("task %s not readable: %s", task_id, exc)
            raise TaskUnknown(task_id, f"task lookup failed ({type(exc).__name__})") from exc
        try:
            workspaces = self.kandev.workspaces()
        except KandevError as exc:
            log.warning("workspaces not readable: %s", exc)
            raise TaskUnknown(task_id, f"workspace lookup failed ({type(exc).__name__})") from exc
        workspace = next((w for w in workspaces if w.id == task.workspace_id), None)
        if workspace is None:
            raise TaskUnknown(task_id, "its workspace is not one Kandev lists to the bot")
        return TaskInfo(
            task_id=task_id,
            title=task.title,
            workspace_id=task.workspace_id,
            workspace_name=workspace.name,
            agent_name=task.primary_agent_name,
            priority=task.priority,
            labels=task.labels,
            assignee=task.assignee_user_id,
        )
