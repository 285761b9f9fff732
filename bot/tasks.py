"""What a card shows about a bundle's task: its title and workspace, read from Kandev.

Shared by discovery (a new card needs its task) and the waiting queue (a bundle listed before
its card exists). The Kandev client caches tasks and workspaces, so a lookup is cheap.
"""

from __future__ import annotations

import logging

from bot.domain import TaskInfo
from bot.kandev.client import KandevClient
from bot.kandev.errors import KandevError, KandevUnavailable

log = logging.getLogger(__name__)


class TaskDirectory:
    def __init__(self, kandev: KandevClient) -> None:
        self.kandev = kandev

    def info(self, task_id: str) -> TaskInfo:
        """The task's title and workspace. Raises KandevUnavailable; any other Kandev error
        gives a TaskInfo with only the id (the card shows "untitled task")."""
        try:
            task = self.kandev.task(task_id)
        except KandevUnavailable:
            raise
        except KandevError as exc:
            log.warning("task %s not readable: %s", task_id, exc)
            return TaskInfo(task_id=task_id)
        name = ""
        try:
            name = next((w.name for w in self.kandev.workspaces() if w.id == task.workspace_id), "")
        except KandevUnavailable:
            raise
        except KandevError as exc:
            log.warning("workspaces not readable: %s", exc)
        return TaskInfo(
            task_id=task_id, title=task.title, workspace_id=task.workspace_id, workspace_name=name
        )
