"""The benchmark's Kandev: a harness server with a wide port block, and agentless bundles.

Two kinds of bundles are used:

- *seeded* (``KandevServer.seed_many``): a task whose scripted mock agent asks and then blocks;
  an answer reaches that agent. Used wherever something answers.
- *direct* (this module): a task with a session but no agent, and a
  ``POST /api/v1/clarification/request``. The moment the bundle is created is then known to the
  millisecond (just before that request), which the time-to-card measurement needs. Nobody
  answers these; their tasks are deleted (or Kandev is stopped) afterwards.

Both kinds hold one agent instance port per live task, so tasks are deleted after each scenario.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx

from tests.kit.harness import (
    KandevHarnessError,
    KandevServer,
    QuestionSpec,
    SeededBundle,
    ensure_runtime,
    sample_questions,
)


def start_kandev(port_cells: int) -> KandevServer:
    """A started Kandev whose agents may use ``port_cells`` harness blocks of ports."""
    server = KandevServer(ensure_runtime(), port_cells=port_cells)
    try:
        server.start()
    except BaseException:
        server.close()
        raise
    return server


@dataclass(frozen=True)
class Slot:
    """A task with a session, ready to ask one bundle."""

    task_id: str
    session_id: str
    workspace_id: str


@dataclass(frozen=True)
class Asked:
    pending_id: str
    task_id: str
    workspace_id: str
    sent_at: float  # time.time() just before the request that created the bundle


class DirectBundles:
    def __init__(self, server: KandevServer, *, workers: int = 4) -> None:
        self.server = server
        self.workers = workers

    def prepare(self, workspace_ids: Sequence[str], count: int) -> list[Slot]:
        """``count`` tasks with a started session, spread round-robin over the workspaces."""
        profile = self.server.mock_profile_id()
        workflows = {ws: self.server.workflow(ws) for ws in workspace_ids}

        def make(n: int) -> Slot:
            workspace_id = workspace_ids[n % len(workspace_ids)]
            workflow = workflows[workspace_id]
            created = self.server.http.post(
                "/tasks",
                json={
                    "workspace_id": workspace_id,
                    "title": f"Bench bundle {n + 1}",
                    "description": "kandev-slack benchmark",
                    "start_agent": False,
                    "agent_profile_id": profile,
                    "workflow_id": workflow.workflow_id,
                    "workflow_step_id": workflow.start_step_id,
                },
            )
            _check(created, "create task")
            task_id = created.json()["id"]
            session = self.server.http.post(f"/tasks/{task_id}/sessions/ensure", json={})
            _check(session, "ensure session")
            return Slot(task_id, session.json()["session_id"], workspace_id)

        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(make, range(count)))

    def ask(
        self, slot: Slot, questions: Sequence[QuestionSpec] | None = None, context: str = ""
    ) -> Asked:
        body = {
            "session_id": slot.session_id,
            "task_id": slot.task_id,
            "questions": list(questions or sample_questions(1, options=3)),
            "context": context or "The benchmark asks: which option?",
        }
        sent_at = time.time()
        response = self.server.http.post("/clarification/request", json=body)
        _check(response, "request clarification")
        return Asked(response.json()["pending_id"], slot.task_id, slot.workspace_id, sent_at)

    def ask_all(self, slots: Sequence[Slot]) -> list[Asked]:
        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(self.ask, slots))


def seed_spread(
    kandev: KandevServer, workspace_ids: Sequence[str], total: int, *, batch: int = 5
) -> list[SeededBundle]:
    """``total`` bundles with a waiting mock agent, spread evenly over the workspaces, at most
    ``batch`` agents launched at once (more at once time out in Kandev on a busy machine)."""
    bundles: list[SeededBundle] = []
    for n, workspace_id in enumerate(workspace_ids):
        share = total // len(workspace_ids) + (1 if n < total % len(workspace_ids) else 0)
        while share > 0:
            size = min(batch, share)
            bundles += kandev.seed_many(size, workspace_id=workspace_id)
            share -= size
    return bundles


def delete_tasks(server: KandevServer, task_ids: Sequence[str], *, workers: int = 4) -> None:
    """Delete tasks in parallel (frees their agent ports); failures are left to Kandev's end."""

    def delete(task_id: str) -> None:
        with contextlib.suppress(httpx.HTTPError, KandevHarnessError):
            server.delete_task(task_id)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(delete, task_ids))


def _check(response: httpx.Response, what: str) -> None:
    if response.is_error:
        raise KandevHarnessError(f"{what}: HTTP {response.status_code} {response.text[:300]}")
