"""The benchmark's Kandev: a harness server with a wide port block, and agentless bundles.

Two kinds of bundles are used:

- *seeded* (``KandevServer.seed_many``): a task whose scripted mock agent asks and then blocks;
  an answer reaches that agent. Used wherever something answers.
- *direct* (this module): a task with a session but no agent, and a
  ``POST /api/v1/clarification/request``. The moment the bundle is created is then known to the
  millisecond (just before that request), which the time-to-card measurement needs. Nobody
  answers these; their tasks are deleted (or Kandev is stopped) afterwards.

Both kinds hold one agent instance port per live task, so tasks are deleted after each scenario.

A direct bundle is agentless only on our side: its session is a session like any other, for which
Kandev starts the harness' mock agent (0.1–0.4 s, and ~10–15 MB with agentctl's share, each);
killing that agent ends the bundle, and a second bundle asked on the session supersedes the first
(Kandev lists one per session). So many waiting bundles cost one session each: the scenarios that
need 1,000 at once share one :class:`WaitingPool`, made once per run and kept until Kandev stops.
"""

from __future__ import annotations

import sys
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
    title: str = ""


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

    def prepare(self, workspace_ids: Sequence[str], count: int, *, first: int = 0) -> list[Slot]:
        """``count`` tasks with a started session, spread round-robin over the workspaces; the
        n-th titled "Bench bundle {first + n + 1}"."""
        profile = self.server.mock_profile_id()
        workflows = {ws: self.server.workflow(ws) for ws in workspace_ids}

        def make(n: int) -> Slot:
            workspace_id = workspace_ids[(first + n) % len(workspace_ids)]
            workflow = workflows[workspace_id]
            title = f"Bench bundle {first + n + 1}"
            created = self.server.http.post(
                "/tasks",
                json={
                    "workspace_id": workspace_id,
                    "title": title,
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
            return Slot(task_id, session.json()["session_id"], workspace_id, title)

        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(make, range(count)))

    def ask(
        self, slot: Slot, questions: Sequence[QuestionSpec] | None = None, context: str = ""
    ) -> Asked:
        body = {
            "session_id": slot.session_id,
            "task_id": slot.task_id,
            "questions": list(questions or own_question(slot.task_id)),
            "context": context or "The benchmark asks: which option?",
        }
        sent_at = time.time()
        response = self.server.http.post("/clarification/request", json=body)
        _check(response, "request clarification")
        return Asked(response.json()["pending_id"], slot.task_id, slot.workspace_id, sent_at)

    def ask_all(self, slots: Sequence[Slot]) -> list[Asked]:
        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(self.ask, slots))


def own_question(task_id: str) -> list[QuestionSpec]:
    """The sample question, made its bundle's own by naming its task: bundles asking the same
    question in a channel are grouped (one channel card, the others in its thread), which
    only the identical-questions scenario and the answers' groups want."""
    return [
        {**q, "prompt": f"{q['prompt']} (task {task_id[:8]})"}
        for q in sample_questions(1, options=3)
    ]


#: Sessions are not made while the machine has less memory available than this (each costs
#: ~10–15 MB: a mock agent process and agentctl's share); the pool waits, then fails instead.
MEMORY_FLOOR_MB = 2048.0
#: How long a shortage of memory waits for an earlier scenario's agents to go.
MEMORY_WAIT_S = 180.0
POOL_CHUNK = 20
#: A chunk of sessions is tried this often: a loaded Kandev drops or times out a request now
#: and then (the tasks made before the failure stay until Kandev stops).
POOL_ATTEMPTS = 4


class WaitingPool:
    """Direct bundles left waiting in Kandev, shared by the scenarios that need many at once
    (noticing, the footprint, then the big queues: they run last, in that order). :meth:`ask`
    grows the pool to at least the number asked for; the bundles stay until Kandev stops, and
    whoever resolves some tells :meth:`forget`."""

    def __init__(self, direct: DirectBundles, workspace_ids: Sequence[str]) -> None:
        self.direct = direct
        self.workspace_ids = list(workspace_ids)
        self.slots: list[Slot] = []  # made, in order; the first len(asked) are asked
        self.asked: list[Asked] = []
        self.prepare_s = 0.0  # spent making sessions, in total

    def prepare(self, count: int) -> list[Slot]:
        """At least ``count`` slots (sessions started), made in chunks, each tried again when a
        loaded Kandev drops a request. Refuses to go on below :data:`MEMORY_FLOOR_MB`
        available."""
        started = time.monotonic()
        try:
            while len(self.slots) < count:
                _enough_memory(count - len(self.slots))
                chunk = min(POOL_CHUNK, count - len(self.slots))
                self.slots += self._chunk(chunk)
                if len(self.slots) % 200 < POOL_CHUNK:
                    _say(f"{len(self.slots)}/{count} sessions for waiting bundles")
        finally:
            self.prepare_s += time.monotonic() - started
        return self.slots[:count]

    def _chunk(self, size: int) -> list[Slot]:
        first = len(self.slots)
        for attempt in range(1, POOL_ATTEMPTS + 1):
            try:
                return self.direct.prepare(self.workspace_ids, size, first=first)
            except (httpx.HTTPError, KandevHarnessError) as exc:
                if attempt == POOL_ATTEMPTS:
                    raise
                _say(f"making waiting bundles failed ({exc}); again in {2**attempt} s")
                time.sleep(2**attempt)
        raise AssertionError("unreachable")

    def ask(self, count: int) -> list[Asked]:
        """At least ``count`` bundles waiting (more sessions made first when needed): every one
        the pool has, oldest first."""
        self.prepare(count)
        fresh = self.slots[len(self.asked) : max(count, len(self.asked))]
        self.asked += self.direct.ask_all(fresh)
        return list(self.asked)

    def adopt(self, asked: Sequence[Asked]) -> None:
        """These bundles were asked by their scenario itself (timed, one at a time), on the
        slots right after the asked ones, in order: they are waiting from now on."""
        fresh = self.slots[len(self.asked) : len(self.asked) + len(asked)]
        if [s.task_id for s in fresh] != [a.task_id for a in asked]:
            raise ValueError("adopted bundles must be asked on the next slots, in order")
        self.asked += asked

    def drop(self, slots: Sequence[Slot]) -> None:
        """These slots are not to be asked again (their scenario failed while asking them)."""
        gone = {s.task_id for s in slots}
        self.slots = self.slots[: len(self.asked)] + [
            s for s in self.slots[len(self.asked) :] if s.task_id not in gone
        ]

    def slot_of(self, pending_id: str) -> Slot:
        for slot, asked in zip(self.slots, self.asked, strict=False):
            if asked.pending_id == pending_id:
                return slot
        raise KeyError(pending_id)

    def forget(self, pending_ids: Sequence[str]) -> None:
        """These bundles were resolved: no longer waiting (their sessions are not reused)."""
        gone = set(pending_ids)
        kept = [
            (s, a) for s, a in zip(self.slots, self.asked, strict=False) if a.pending_id not in gone
        ]
        unasked = self.slots[len(self.asked) :]
        self.slots = [s for s, _ in kept] + unasked
        self.asked = [a for _, a in kept]


def _enough_memory(sessions: int, wait_s: float = MEMORY_WAIT_S) -> None:
    """Room for more sessions, or raise. An earlier scenario's deleted tasks free their mock
    agents' memory some time after the delete: a shortage waits up to ``wait_s`` for that."""
    available = _available_mb()
    if available is None or available >= MEMORY_FLOOR_MB:
        return
    _say(f"only {available:.0f} MB of memory available: waiting up to {wait_s:.0f} s for more")
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        time.sleep(5.0)
        available = _available_mb()
        if available is None or available >= MEMORY_FLOOR_MB:
            return
    raise KandevHarnessError(
        f"only {available:.0f} MB of memory available, {sessions} more sessions to make "
        f"(~10–15 MB each): stopped above {MEMORY_FLOOR_MB:.0f} MB rather than exhaust the "
        "machine; ask for fewer waiting bundles"
    )


def _available_mb() -> float | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def _say(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


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


def delete_tasks(server: KandevServer, task_ids: Sequence[str]) -> None:
    """Delete tasks in parallel (frees their agent ports); failures are left to Kandev's end."""
    server.delete_tasks(task_ids)


def _check(response: httpx.Response, what: str) -> None:
    if response.is_error:
        raise KandevHarnessError(f"{what}: HTTP {response.status_code} {response.text[:300]}")
