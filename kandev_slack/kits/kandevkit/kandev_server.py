"""Run a real Kandev server on loopback and drive it the way a person or an agent would.

``KandevServer`` starts ``kandev run --headless`` with a private HOME, a private block of ports
and our scripted ``mock-agent`` as its only agent. It seeds real, active clarification bundles by
creating tasks whose agent asks the questions, answers or cancels them as the web UI would, and
reads back how they ended and what the agent was told. ``stop()`` keeps the HOME, so a later
``start()`` brings the same server (same data, same ports) back; ``close()`` deletes every seeded
task, stops the server and removes its files.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from . import mock_agent
from .kandev_runtime import RUNTIME_FILES
from .mcp import McpSession
from .ports import PortReservation, reserve_block
from .processes import stop_tree
from .specs import QuestionSpec, sample_questions

MOCK_AGENT_NAME = "mock-agent"
OPTION_ID = re.compile(r"^q\d+_opt\d+$")
AUTH_EMAIL = "harness@example.com"
AUTH_PASSWORD = "harness-password-1234"
POLL_INTERVAL = 0.1


class KandevHarnessError(RuntimeError):
    """The harness could not bring Kandev into the state a test asked for."""


class KandevRefused(KandevHarnessError):
    """Kandev refused a harness call: ``status`` (HTTP) or ``code`` (a ``/ws`` error frame's),
    and what it said (``text``)."""

    def __init__(
        self, what: str, *, status: int | None = None, code: str | None = None, text: str = ""
    ) -> None:
        said = f"HTTP {status}" if status is not None else f"/ws error {code}"
        super().__init__(f"{what}: {said} {text[:500]}")
        self.status = status
        self.code = code
        self.text = text


@dataclass(frozen=True)
class SeededBundle:
    pending_id: str
    task_id: str
    session_id: str
    workspace_id: str
    marker: str


@dataclass(frozen=True)
class Workflow:
    """A workspace's task workflow and the step new tasks start in."""

    workflow_id: str
    start_step_id: str


class KandevServer:
    def __init__(
        self,
        runtime_dir: Path,
        *,
        auth: bool = False,
        work_dir: Path | None = None,
        startup_timeout: float = 60.0,
        port_cells: int = 1,
        features: Sequence[str] = (),
        base_port: int | None = None,
    ) -> None:
        """``port_cells`` adjacent port blocks give the agents that many times more instance
        ports (one per live task); ``features``: Kandev feature flags turned on
        (``needs_you_inbox`` sets ``KANDEV_FEATURES_NEEDS_YOU_INBOX=true``); ``base_port``: its
        HTTP port, the block of ports after it its others (else a free block is chosen)."""
        self.base_port = base_port
        self.runtime_dir = Path(runtime_dir)
        self.auth = auth
        self.features = tuple(features)
        self.startup_timeout = startup_timeout
        self.port_cells = port_cells
        self._owns_work_dir = work_dir is None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="kandev-harness-"))
        self.home = self.work_dir / "home"
        self.bin_dir = self.work_dir / "bin"
        self.results_dir = self.work_dir / "agent-results"
        self.log_path = self.work_dir / "kandev.log"
        self.agent_log_path = self.work_dir / "mock-agent.log"
        self._reservation: PortReservation | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._http: httpx.Client | None = None
        self._mcp: McpSession | None = None
        self._token: str | None = None
        # Clients carrying another person's token (``http_as``, ``mcp_as``), by token.
        self._clients: dict[str, httpx.Client] = {}
        self._mcp_sessions: dict[str, McpSession] = {}
        self._clients_lock = threading.Lock()
        # The token each task was seeded with and each known session's, when not the harness's.
        self._task_tokens: dict[str, str] = {}
        self._session_tokens: dict[str, str] = {}
        self._default_workspace: str | None = None
        self._profile_id: str | None = None
        self._workflows: dict[str, Workflow] = {}
        self._seeded: dict[str, SeededBundle] = {}  # by task id, until deleted
        self._markers: dict[str, str] = {}  # task id -> marker, kept after deletion
        self._closed = False

    # --- lifecycle ----------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """The Kandev process's id (its backend and agents run below it), if it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def port(self) -> int:
        if self._reservation is None:
            raise KandevHarnessError("the server has not been started")
        return self._reservation.block.http

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str | None:
        """The personal access token (auth mode only)."""
        return self._token

    @property
    def http(self) -> httpx.Client:
        """A REST client for ``/api/v1`` paths, carrying the token when auth is on."""
        if self._http is None:
            raise KandevHarnessError("the server has not been started")
        return self._http

    @property
    def mcp(self) -> McpSession:
        if self._mcp is None:
            raise KandevHarnessError("the server has not been started")
        return self._mcp

    def http_as(self, token: str | None) -> httpx.Client:
        """A REST client for ``/api/v1`` paths carrying ``token`` (a person's PAT); ``None`` or
        the harness's own token: ``http``."""
        if token is None or token == self._token:
            return self.http
        with self._clients_lock:
            if self._http is None:
                raise KandevHarnessError("the server has not been started")
            client = self._clients.get(token)
            if client is None:
                client = httpx.Client(
                    base_url=f"{self.base_url}/api/v1",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=60.0,
                    trust_env=False,
                )
                self._clients[token] = client
            return client

    def mcp_as(self, token: str | None) -> McpSession:
        """An MCP session carrying ``token``; ``None`` or the harness's own token: ``mcp``."""
        if token is None or token == self._token:
            return self.mcp
        with self._clients_lock:
            if self._mcp is None:
                raise KandevHarnessError("the server has not been started")
            session = self._mcp_sessions.get(token)
            if session is None:
                session = McpSession(self.base_url, token=token)
                self._mcp_sessions[token] = session
            return session

    def token_for(self, task_id: str) -> str | None:
        """The token a task was seeded with (``seed_bundle(token=…)``), else the harness's."""
        return self._task_tokens.get(task_id, self._token)

    def token_for_session(self, session_id: str) -> str | None:
        """The token the task of a known session was seeded with, else the harness's."""
        return self._session_tokens.get(session_id, self._token)

    def remember_session(self, session_id: str, task_id: str) -> None:
        """Note which seeded task a session belongs to (reads of it then use that token)."""
        token = self._task_tokens.get(task_id)
        if token is not None and session_id:
            self._session_tokens[session_id] = token

    def start(self) -> KandevServer:
        if self._closed:
            raise KandevHarnessError("the server was closed")
        if self.running:
            return self
        if self._reservation is None:
            self._reservation = reserve_block(cells=self.port_cells, base=self.base_port)
            atexit.register(self.close)
        self._prepare_files()
        log = self.log_path.open("ab")
        try:
            self._process = subprocess.Popen(
                [str(self.bin_dir / "kandev"), "run", "--headless", "--port", str(self.port)],
                cwd=self.work_dir,
                env=self._environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()
        try:
            self._wait_ready(expect_auth_challenge=self.auth and self._token is None)
            if self.auth and self._token is None:
                self._token = self._mint_token()
            self._open_clients()
            self._wait_ready(expect_auth_challenge=False)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop gracefully (kill after a grace period); HOME and ports are kept for ``start()``."""
        self._close_clients()
        if self._process is not None:
            stop_tree(self._process)
            self._process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        """Delete every seeded task (unless its files go with it: then stopping is enough),
        stop the server, release its ports and remove its files."""
        if self._closed:
            return
        if self.running and not self._owns_work_dir:
            for task_id in list(self._seeded):
                with contextlib.suppress(httpx.HTTPError, KandevHarnessError):
                    self.delete_task(task_id)
        self.stop()
        self._closed = True
        if self._reservation is not None:
            self._reservation.release()
            self._reservation = None
        if self._owns_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)
        with contextlib.suppress(Exception):
            atexit.unregister(self.close)

    def __enter__(self) -> KandevServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _prepare_files(self) -> None:
        for directory in (self.home, self.bin_dir, self.results_dir):
            directory.mkdir(parents=True, exist_ok=True)
        for name in RUNTIME_FILES:
            target = self.bin_dir / name
            if target.exists():
                continue
            source = self.runtime_dir / "bin" / name
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)
        wrapper = self.bin_dir / MOCK_AGENT_NAME
        wrapper.write_text(
            f"#!{sys.executable}\n"
            "import os, sys\n"
            f"args = [{str(Path(mock_agent.__file__).resolve())!r},\n"
            f"        '--results-dir', {str(self.results_dir)!r},\n"
            f"        '--log', {str(self.agent_log_path)!r}]\n"
            "os.execv(sys.executable, [sys.executable, *args, *sys.argv[1:]])\n"
        )
        wrapper.chmod(0o755)

    def _environment(self) -> dict[str, str]:
        assert self._reservation is not None
        block = self._reservation.block
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("KANDEV_", "AGENTCTL_", "XDG_"))
        }
        env.update(
            HOME=str(self.home),
            PATH=f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            KANDEV_SERVER_HOST="127.0.0.1",
            KANDEV_DOCKER_ENABLED="false",
            KANDEV_MOCK_AGENT="only",
            AGENTCTL_LISTEN_HOST="127.0.0.1",
            AGENTCTL_PORT=str(block.agentctl),
            KANDEV_AGENT_STANDALONE_PORT=str(block.agent_standalone),
            AGENTCTL_INSTANCE_PORT_BASE=str(block.instance_first),
            AGENTCTL_INSTANCE_PORT_MAX=str(block.instance_last),
        )
        if self.auth:
            env["KANDEV_FEATURES_AUTH"] = "true"
        for feature in self.features:
            env[f"KANDEV_FEATURES_{feature.upper()}"] = "true"
        return env

    def _wait_ready(self, *, expect_auth_challenge: bool) -> None:
        """Poll ``GET /api/v1/workspaces`` until the API (not just ``/health``) answers."""
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        ready = {401} if expect_auth_challenge else {200}
        deadline = time.monotonic() + self.startup_timeout
        last = "no answer"
        with httpx.Client(timeout=5.0, trust_env=False) as probe:
            while time.monotonic() < deadline:
                if self._process is None or self._process.poll() is not None:
                    raise KandevHarnessError(f"kandev exited during start-up\n{self.log_tail()}")
                try:
                    response = probe.get(f"{self.base_url}/api/v1/workspaces", headers=headers)
                    if response.status_code in ready:
                        return
                    last = f"HTTP {response.status_code} {response.text[:200]}"
                except httpx.TransportError as exc:
                    last = repr(exc)
                time.sleep(POLL_INTERVAL)
        raise KandevHarnessError(
            f"kandev not ready after {self.startup_timeout:.0f}s (last: {last})\n{self.log_tail()}"
        )

    def _mint_token(self) -> str:
        with httpx.Client(base_url=self.base_url, timeout=30.0, trust_env=False) as browser:
            me = browser.get("/api/v1/auth/me").json()
            if me.get("mode") != "setup":
                raise KandevHarnessError(f"auth server is not in setup mode: {me!r}")
            setup = browser.post(
                "/api/v1/auth/setup",
                json={"email": AUTH_EMAIL, "password": AUTH_PASSWORD, "display_name": "Harness"},
            )
            _check(setup, "auth setup")
            minted = browser.post(
                "/api/v1/auth/tokens", json={"name": "kandev-slack-tests", "ttl_hours": 0}
            )
            _check(minted, "mint token")
            token = minted.json()["token"]
        (self.work_dir / "token").write_text(token)
        return token

    def _open_clients(self) -> None:
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        self._http = httpx.Client(
            base_url=f"{self.base_url}/api/v1", headers=headers, timeout=60.0, trust_env=False
        )
        self._mcp = McpSession(self.base_url, token=self._token)

    def _close_clients(self) -> None:
        with self._clients_lock:
            for client in self._clients.values():
                client.close()
            for session in self._mcp_sessions.values():
                session.close()
            self._clients.clear()
            self._mcp_sessions.clear()
        if self._http is not None:
            self._http.close()
            self._http = None
        if self._mcp is not None:
            self._mcp.close()
            self._mcp = None

    def log_tail(self, lines: int = 40) -> str:
        """The end of Kandev's own log, for failure messages."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no kandev log)"
        return "\n".join(text.splitlines()[-lines:])

    # --- Kandev objects -----------------------------------------------------------------
    @property
    def workspace_id(self) -> str:
        """The id of the default workspace Kandev creates on first start."""
        if self._default_workspace is None:
            workspaces = self.workspaces()
            default = [w for w in workspaces if w.get("name") == "Default Workspace"]
            self._default_workspace = (default or workspaces)[0]["id"]
        return self._default_workspace

    def workspaces(self, *, token: str | None = None) -> list[dict[str, Any]]:
        """The workspaces ``token``'s person sees (default: the harness's)."""
        response = self.http_as(token).get("/workspaces")
        _check(response, "list workspaces")
        return response.json()["workspaces"]

    def create_workspace(self, name: str, *, token: str | None = None) -> str:
        """A new workspace, owned by ``token``'s person (default: the harness)."""
        response = self.http_as(token).post("/workspaces", json={"name": name})
        _check(response, "create workspace")
        return response.json()["id"]

    def task(self, task_id: str, *, token: str | None = None) -> dict[str, Any]:
        """``GET /tasks/{id}`` with ``token`` (default: the token the task was seeded with)."""
        response = self._http_for_task(task_id, token).get(f"/tasks/{task_id}")
        _check(response, f"get task {task_id}")
        return response.json()

    def _http_for_task(self, task_id: str, token: str | None) -> httpx.Client:
        return self.http_as(token if token is not None else self.token_for(task_id))

    def seeded_task_ids(self) -> list[str]:
        """Tasks this server seeded and has not deleted yet (``close()`` deletes them)."""
        return list(self._seeded)

    def delete_task(
        self, task_id: str, *, token: str | None = None, timeout: float | None = None
    ) -> None:
        """Delete a task (frees its agent port); an already deleted task is fine. ``token``:
        default, the token it was seeded with; ``timeout``: default, the client's (60 s)."""
        client = self._http_for_task(task_id, token)
        response = client.delete(
            f"/tasks/{task_id}", timeout=client.timeout if timeout is None else timeout
        )
        if response.status_code != 404:
            _check(response, f"delete task {task_id}")
        self._seeded.pop(task_id, None)

    def delete_tasks(
        self, task_ids: Sequence[str], *, timeout: float | None = None, workers: int = 4
    ) -> None:
        """Delete tasks, ``workers`` at a time; one that fails (or takes over ``timeout``: Kandev
        answers a delete only after a cancel still in flight on that task, whose own answer can
        take a minute) is left to the server's end."""

        def delete(task_id: str) -> None:
            with contextlib.suppress(httpx.HTTPError, KandevHarnessError):
                self.delete_task(task_id, timeout=timeout)

        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(delete, task_ids))

    def mock_profile_id(self) -> str:
        """The id of the scripted mock agent's enabled profile (what seeded tasks run)."""
        if self._profile_id is None:
            response = self.http.get("/agents")
            _check(response, "list agents")
            for agent in response.json()["agents"]:
                if agent.get("name") != MOCK_AGENT_NAME:
                    continue
                for profile in agent.get("profiles") or []:
                    if profile.get("enabled"):
                        self._profile_id = profile["id"]
                        return self._profile_id
            raise KandevHarnessError(f"no enabled {MOCK_AGENT_NAME} profile: {response.text}")
        return self._profile_id

    def workflow(self, workspace_id: str, *, token: str | None = None) -> Workflow:
        """The workflow seeded tasks of ``workspace_id`` use (created on first use, with
        ``token``: someone who may manage that workspace; default, the harness)."""
        if workspace_id not in self._workflows:
            http = self.http_as(token)
            created = http.post(
                "/workflows",
                json={
                    "workspace_id": workspace_id,
                    "name": "kandev-slack harness",
                    "workflow_template_id": "simple",
                },
            )
            _check(created, "create workflow")
            workflow_id = created.json()["id"]
            steps = http.get(f"/workflows/{workflow_id}/workflow/steps")
            _check(steps, "list workflow steps")
            start = [s for s in steps.json()["steps"] if s.get("is_start_step")]
            if not start:
                raise KandevHarnessError(f"workflow {workflow_id} has no start step")
            self._workflows[workspace_id] = Workflow(workflow_id, start[0]["id"])
        return self._workflows[workspace_id]

    # --- seeding ------------------------------------------------------------------------
    def seed_bundle(
        self,
        questions: Sequence[QuestionSpec] | None = None,
        context: str = "",
        title: str | None = None,
        *,
        workspace_id: str | None = None,
        timeout: float = 30.0,
        transcript: Sequence[dict[str, Any]] = (),
        labels: Sequence[str] = (),
        priority: str | None = None,
        description: str = "",
        then: Sequence[dict[str, Any]] = (),
        token: str | None = None,
    ) -> SeededBundle:
        """Create a task whose agent asks ``questions``; return once its bundle is listed.

        ``transcript``: what the agent says and runs before asking (see ``mock_agent.play``);
        ``labels``, ``priority``: the task's metadata; ``description``: Markdown shown before
        the agent's spec line in the task's description; ``then``: what the agent says and runs
        once answered (as ``transcript``); ``token``: a person's PAT the task is created, listed
        and later read, answered and deleted with (default: the harness's), e.g. to seed in a
        workspace only that person sees."""
        task = self._create_seed_task(
            questions,
            context,
            title,
            workspace_id,
            transcript=transcript,
            labels=labels,
            priority=priority,
            description=description,
            then=then,
            token=token,
        )
        return self._await_bundles([task], timeout)[0]

    def seed_many(
        self,
        count: int,
        questions: Sequence[QuestionSpec] | None = None,
        context: str = "",
        *,
        workspace_id: str | None = None,
        timeout: float | None = None,
        token: str | None = None,
    ) -> list[SeededBundle]:
        """Seed ``count`` bundles (tasks created back to back, agents start in parallel), with
        ``token`` as ``seed_bundle``."""
        tasks = [
            self._create_seed_task(
                questions, context, f"Harness bundle {n}", workspace_id, token=token
            )
            for n in range(1, count + 1)
        ]
        return self._await_bundles(tasks, timeout or 30.0 + 2.0 * count)

    def _create_seed_task(
        self,
        questions: Sequence[QuestionSpec] | None,
        context: str,
        title: str | None,
        workspace_id: str | None,
        *,
        transcript: Sequence[dict[str, Any]] = (),
        labels: Sequence[str] = (),
        priority: str | None = None,
        description: str = "",
        permissions: Sequence[dict[str, Any]] = (),
        then: Sequence[dict[str, Any]] = (),
        token: str | None = None,
    ) -> dict[str, Any]:
        """Create a task whose mock agent asks ``questions``, or (when ``permissions`` are
        given) sends those tool-permission requests instead (see ``mock_agent.permission_spec``);
        with ``token`` (a person's PAT; default: the harness's)."""
        questions = list(questions) if questions is not None else sample_questions(1)
        workspace_id = workspace_id or self.workspace_id
        workflow = self.workflow(workspace_id, token=token)
        marker = uuid.uuid4().hex
        first_title = questions[0].get("title", "question") if questions else "question"
        spec = mock_agent.spec_line(
            marker, questions, context, list(transcript), list(permissions), list(then)
        )
        body: dict[str, Any] = {
            "workspace_id": workspace_id,
            "title": title or f"Harness: {first_title}",
            # In an HTML comment: where the description is shown (the web UI, the bot's
            # Conversation view) the agent's script stays out of sight.
            "description": f"{description}\n\n<!-- {spec} -->" if description else spec,
            "start_agent": True,
            "agent_profile_id": self.mock_profile_id(),
            "workflow_id": workflow.workflow_id,
            "workflow_step_id": workflow.start_step_id,
        }
        if labels:
            body["labels"] = list(labels)
        if priority is not None:
            body["priority"] = priority
        response = retried_while_persistence_unavailable(
            lambda: self.http_as(token).post("/tasks", json=body)
        )
        _check(response, "create task")
        task_id = response.json()["id"]
        if token is not None and token != self._token:
            self._task_tokens[task_id] = token
        self._markers[task_id] = marker
        self._seeded[task_id] = SeededBundle("", task_id, "", workspace_id, marker)
        return {
            "task_id": task_id,
            "workspace_id": workspace_id,
            "marker": marker,
            "question_count": len(questions),
        }

    def _await_bundles(self, tasks: list[dict[str, Any]], timeout: float) -> list[SeededBundle]:
        """Wait until each task's bundle is listed with all its questions.

        Kandev lists a bundle as soon as its first question is stored, so for a few
        milliseconds a multi-question bundle can be listed with only some of its questions.
        """
        deadline = time.monotonic() + timeout
        found: dict[str, SeededBundle] = {}
        tokens = list(dict.fromkeys(self.token_for(t["task_id"]) for t in tasks))
        while True:
            listed = [b for token in tokens for b in self.list_pending(token=token)]
            for bundle in listed:
                task = next((t for t in tasks if t["task_id"] == bundle["task_id"]), None)
                complete = task is not None and len(bundle["questions"]) == task["question_count"]
                if task is not None and complete and task["task_id"] not in found:
                    found[task["task_id"]] = SeededBundle(
                        bundle["pending_id"],
                        task["task_id"],
                        bundle["session_id"],
                        task["workspace_id"],
                        task["marker"],
                    )
            if len(found) == len(tasks):
                break
            for task in tasks:
                record = self._agent_record(task["task_id"])
                tool = (record or {}).get("tool") or {}
                if tool.get("is_error") or (record or {}).get("errors"):
                    raise KandevHarnessError(
                        f"mock agent of task {task['task_id']} could not ask: "
                        f"{tool.get('text') or (record or {}).get('errors')}"
                    )
            if time.monotonic() > deadline:
                missing = [t["task_id"] for t in tasks if t["task_id"] not in found]
                raise KandevHarnessError(
                    f"no pending bundle appeared within {timeout:.0f}s for tasks {missing}\n"
                    f"--- mock agent log ---\n{self._agent_log_tail()}\n"
                    f"--- kandev log ---\n{self.log_tail()}"
                )
            time.sleep(POLL_INTERVAL)
        bundles = [found[t["task_id"]] for t in tasks]
        self._seeded.update({b.task_id: b for b in bundles})
        for seeded in bundles:
            self.remember_session(seeded.session_id, seeded.task_id)
        return bundles

    def _agent_log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.agent_log_path.read_text().splitlines()[-lines:])
        except OSError:
            return "(no mock agent log)"

    # --- reading state ------------------------------------------------------------------
    def list_pending(
        self, workspace_id: str | None = None, *, page_size: int = 200, token: str | None = None
    ) -> list[dict[str, Any]]:
        """Every active bundle ``token``'s person sees (default: the harness), all pages of
        ``list_pending_questions_kandev``, oldest first."""
        mcp = self.mcp_as(token)
        bundles: list[dict[str, Any]] = []
        cursor = ""
        while True:
            arguments: dict[str, Any] = {"limit": page_size}
            if workspace_id:
                arguments["workspace_id"] = workspace_id
            if cursor:
                arguments["cursor"] = cursor
            page = mcp.call_tool("list_pending_questions_kandev", arguments)
            bundles.extend(page["bundles"])
            cursor = page.get("next_cursor") or ""
            if not cursor:
                return bundles

    def clarification_messages(
        self, task_id: str, *, token: str | None = None
    ) -> list[dict[str, Any]]:
        """The task's ``clarification_request`` messages (one per question), oldest first,
        read with ``token`` (default: the token the task was seeded with)."""
        mcp = self.mcp_as(token if token is not None else self.token_for(task_id))
        messages: list[dict[str, Any]] = []
        after = ""
        while True:
            arguments: dict[str, Any] = {
                "task_id": task_id,
                "message_types": ["clarification_request"],
                "sort": "asc",
                "limit": 100,
            }
            if after:
                arguments["after"] = after
            page = mcp.call_tool("get_task_conversation_kandev", arguments)
            batch = page.get("messages") or []
            messages.extend(batch)
            if not page.get("has_more") or not batch:
                return messages
            after = batch[-1]["id"]

    def final_status(
        self, task_id: str, pending_id: str, *, token: str | None = None
    ) -> dict[str, Any]:
        """How a bundle stands according to its clarification messages (read as
        ``clarification_messages`` does).

        ``{"pending_id", "task_id", "status", "questions": {question_id: {"status", "response"}}}``
        where ``status`` is the questions' common status (``"mixed"`` if they differ,
        ``"missing"`` if the task has no message for ``pending_id``).
        """
        questions: dict[str, dict[str, Any]] = {}
        for message in self.clarification_messages(task_id, token=token):
            metadata = message.get("metadata") or {}
            if metadata.get("pending_id") != pending_id:
                continue
            questions[metadata.get("question_id", "")] = {
                "status": metadata.get("status"),
                "response": metadata.get("response"),
            }
        statuses = {q["status"] for q in questions.values()}
        status = statuses.pop() if len(statuses) == 1 else ("missing" if not statuses else "mixed")
        return {
            "pending_id": pending_id,
            "task_id": task_id,
            "status": status,
            "questions": questions,
        }

    def agent_result(self, task_id: str, timeout: float = 10.0) -> dict[str, Any] | None:
        """What the task's mock agent was told, once it was told anything (else ``None``).

        The record (see ``mock_agent``) has ``tool`` (the ``ask_user_question_kandev`` result:
        ``is_error``, ``text``, ``parsed``) and ``prompts`` (later prompts in the same session,
        e.g. the answer Kandev delivers as a prompt after a restart).
        """
        deadline = time.monotonic() + timeout
        while True:
            record = self._agent_record(task_id)
            if record is not None and (record.get("tool") or record.get("prompts")):
                return record
            if time.monotonic() > deadline:
                return None
            time.sleep(POLL_INTERVAL)

    def agent_record(self, task_id: str) -> dict[str, Any] | None:
        """The task's mock agent record as it stands now (see ``mock_agent``), or None."""
        return self._agent_record(task_id)

    def _agent_record(self, task_id: str) -> dict[str, Any] | None:
        marker = self._markers.get(task_id)
        if marker is None:
            return None
        try:
            return json.loads((self.results_dir / f"{marker}.json").read_text())
        except (OSError, ValueError):
            return None

    # --- acting on bundles --------------------------------------------------------------
    def respond(
        self,
        pending_id: str,
        body: Mapping[str, Any] | str,
        *,
        timeout: float = 60.0,
        token: str | None = None,
    ) -> httpx.Response:
        """``POST /clarification/{id}/respond`` as the web UI does (a str body is sent raw), as
        ``token``'s person (default: whoever seeded the bundle, else the harness)."""
        url = f"/clarification/{pending_id}/respond"
        http = self.http_as(token if token is not None else self._seeding_token(pending_id))
        if isinstance(body, str):
            headers = {"Content-Type": "application/json"}
            return http.post(url, content=body, headers=headers, timeout=timeout)
        return http.post(url, json=dict(body), timeout=timeout)

    def answer(
        self,
        pending_id: str,
        answers: Mapping[str, str | Sequence[str]],
        *,
        token: str | None = None,
    ) -> httpx.Response:
        """Answer each question: an option id (``q1_opt2``), a list of them, or free text (as
        ``respond``, with ``token``)."""
        entries = []
        for question_id, value in answers.items():
            if isinstance(value, str) and not OPTION_ID.match(value):
                entries.append(
                    {"question_id": question_id, "selected_options": [], "custom_text": value}
                )
            else:
                selected = [value] if isinstance(value, str) else list(value)
                entries.append(
                    {"question_id": question_id, "selected_options": selected, "custom_text": ""}
                )
        return self.respond(
            pending_id,
            {"answers": entries, "rejected": False, "reject_reason": ""},
            token=token,
        )

    def reject(
        self, pending_id: str, reason: str = "", *, token: str | None = None
    ) -> httpx.Response:
        return self.respond(
            pending_id,
            {"answers": [], "rejected": True, "reject_reason": reason},
            token=token,
        )

    def cancel(
        self, pending_id: str, *, timeout: float = 30.0, token: str | None = None
    ) -> dict[str, Any]:
        """Cancel a live bundle as an operator would and wait until Kandev recorded it.

        The cancel request's HTTP answer can be very slow, so it runs in the background; this
        returns ``final_status`` once the bundle left the list and reads ``cancelled``.
        ``token``: whose cancel it is (default: whoever seeded the bundle, else the harness).
        """
        token = token if token is not None else self._seeding_token(pending_id)
        task_id = self._task_of(pending_id, token)
        marker = self._markers.get(task_id)
        if marker is not None:
            flag = mock_agent.cancel_flag(self.results_dir, marker)
            flag.parent.mkdir(parents=True, exist_ok=True)
            flag.touch()
        threading.Thread(
            target=self._post_cancel,
            args=(pending_id, token),
            name=f"cancel-{pending_id}",
            daemon=True,
        ).start()
        deadline = time.monotonic() + timeout
        while True:
            listed = any(b["pending_id"] == pending_id for b in self.list_pending(token=token))
            status = self.final_status(task_id, pending_id, token=token)
            if not listed and status["status"] == "cancelled":
                return status
            if time.monotonic() > deadline:
                raise KandevHarnessError(
                    f"bundle {pending_id} not recorded as cancelled after {timeout:.0f}s "
                    f"(listed={listed}, status={status})"
                )
            time.sleep(POLL_INTERVAL)

    def _post_cancel(self, pending_id: str, token: str | None) -> None:
        with contextlib.suppress(httpx.HTTPError, KandevHarnessError):
            self.http_as(token).post(f"/clarification/{pending_id}/cancel", timeout=180.0)

    def _seeding_token(self, pending_id: str) -> str | None:
        """The token the bundle ``pending_id`` was seeded with (else the harness's)."""
        for bundle in list(self._seeded.values()):
            if bundle.pending_id == pending_id:
                return self.token_for(bundle.task_id)
        return self._token

    def _task_of(self, pending_id: str, token: str | None = None) -> str:
        for bundle in list(self._seeded.values()):
            if bundle.pending_id == pending_id:
                return bundle.task_id
        for listed in self.list_pending(token=token):
            if listed["pending_id"] == pending_id:
                return str(listed["task_id"])
        raise KandevHarnessError(f"bundle {pending_id} is neither seeded here nor listed")


#: How long a request Kandev refused because its own database did not answer in time is
#: tried again (see :func:`retried_while_persistence_unavailable`).
PERSISTENCE_RETRY_S = 60.0


def _refused_by_persistence(response: httpx.Response) -> bool:
    """Kandev's "required persistence is unavailable" (503): a probe of its own database
    timed out under load, and until the next probe passes it refuses every request in a
    middleware, before handling it (nothing was done)."""
    if response.status_code != 503:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("code") == "persistence_unavailable"


def retried_while_persistence_unavailable(
    send: Callable[[], httpx.Response],
    within_s: float = PERSISTENCE_RETRY_S,
    sleep: Callable[[float], None] = time.sleep,
) -> httpx.Response:
    """``send()``, sent again while Kandev refuses it for its own database (a benchmark's
    crowd loaded the machine: seeding the next round must not fail the run), for up to
    ``within_s`` seconds; the last response otherwise."""
    deadline = time.monotonic() + within_s
    wait = 0.25
    while True:
        response = send()
        if not _refused_by_persistence(response) or time.monotonic() + wait > deadline:
            return response
        sleep(wait)
        wait = min(wait * 2, 4.0)


def _check(response: httpx.Response, what: str) -> None:
    if response.is_error:
        raise KandevRefused(what, status=response.status_code, text=response.text)
