"""Tool-permission requests on the real Kandev, for tests: seed one (a task whose mock agent
sends ``session/request_permission``), list, resolve, and read what the agent and the
transcript say. Raw wire calls on purpose: the bot's own client is what the tests check."""

from __future__ import annotations

import builtins
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from websockets.sync.client import connect

from .kandev_server import POLL_INTERVAL, KandevHarnessError, KandevRefused, KandevServer
from .mcp import McpToolError

LIST_TOOL = "list_pending_agent_permissions_kandev"
RESOLVE_TOOL = "resolve_agent_permission_kandev"
PERMISSION_TYPE = "permission_request"


@dataclass(frozen=True)
class SeededPermission:
    """One listed request: the ids a resolve needs, as the list gave them."""

    task_id: str
    session_id: str
    request_id: str
    pending_id: str
    workspace_id: str
    marker: str
    option_ids: tuple[str, ...] = ()
    listed: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def resolve_arguments(self, option_id: str) -> dict[str, str]:
        return {
            "task_id": self.task_id,
            "session_id": self.session_id,
            "request_id": self.request_id,
            "pending_id": self.pending_id,
            "option_id": option_id,
        }


class Permissions:
    """The permission calls of one Kandev server, made with ``token`` (a person's PAT) when
    given; else each call acts as whoever seeded the task it names (``server.token_for``), and
    as the harness for tasks it seeded or does not know."""

    def __init__(self, server: KandevServer, token: str | None = None) -> None:
        self.server = server
        self.token = token

    def _for_task(self, task_id: str) -> str | None:
        return self.token if self.token is not None else self.server.token_for(task_id)

    def _for_session(self, session_id: str) -> str | None:
        return self.token if self.token is not None else self.server.token_for_session(session_id)

    def _for_payload(self, payload: dict[str, Any]) -> str | None:
        if self.token is not None:
            return self.token
        if payload.get("task_id"):
            return self.server.token_for(str(payload["task_id"]))
        if payload.get("session_id"):
            return self.server.token_for_session(str(payload["session_id"]))
        return self.server.token

    def seed(
        self,
        requests: Sequence[dict[str, Any]],
        title: str = "Harness: permission",
        *,
        workspace_id: str | None = None,
        description: str = "",
        timeout: float = 30.0,
    ) -> SeededPermission:
        """Create a task whose agent sends ``requests`` (``mock_agent.permission_spec``) one
        after another; return the first once it is listed."""
        task_id = self.start(requests, title, workspace_id=workspace_id, description=description)
        return self.next(task_id, timeout=timeout)

    def start(
        self,
        requests: Sequence[dict[str, Any]],
        title: str = "Harness: permission",
        *,
        workspace_id: str | None = None,
        description: str = "",
    ) -> str:
        """Create that task and return its id at once (its agent asks when it has started)."""
        task = self.server._create_seed_task(
            [],
            "",
            title,
            workspace_id,
            description=description,
            permissions=list(requests),
            token=self.token,
        )
        return str(task["task_id"])

    def next(
        self, task_id: str, *, after: Sequence[str] = (), timeout: float = 30.0
    ) -> SeededPermission:
        """The task's first listed request whose ``request_id`` is not in ``after``, waiting for
        it (Kandev answers INTERNAL_ERROR while the agent starts: retried)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                listed = [p for p in self.list(task_id) if p["request_id"] not in after]
            except McpToolError as exc:
                if "INTERNAL_ERROR" not in str(exc):
                    raise
                listed = []
            if listed:
                return self._seeded(task_id, listed[0])
            record = self.server.agent_record(task_id) or {}
            if record.get("errors"):
                raise KandevHarnessError(f"mock agent of {task_id} failed: {record['errors']}")
            if time.monotonic() > deadline:
                raise KandevHarnessError(
                    f"no permission request listed within {timeout:.0f}s for task {task_id}\n"
                    f"--- kandev log ---\n{self.server.log_tail()}"
                )
            time.sleep(POLL_INTERVAL)

    def list(self, task_id: str, session_id: str | None = None) -> list[dict[str, Any]]:
        """``list_pending_agent_permissions_kandev``'s ``permissions`` (tool errors raise)."""
        arguments = {"task_id": task_id}
        if session_id:
            arguments["session_id"] = session_id
        mcp = self.server.mcp_as(self._for_task(task_id))
        return list(mcp.call_tool(LIST_TOOL, arguments)["permissions"])

    def resolve(self, seeded: SeededPermission, option_id: str) -> dict[str, Any]:
        """Resolve over MCP (``McpToolError`` carries Kandev's ``backend error [CODE]``)."""
        mcp = self.server.mcp_as(self._for_task(seeded.task_id))
        return dict(mcp.call_tool(RESOLVE_TOOL, seeded.resolve_arguments(option_id)))

    def respond(self, seeded: SeededPermission, option_id: str) -> dict[str, Any]:
        """Resolve as Kandev's web UI does: ``permission.respond`` over ``/ws`` (audited with
        ``source: "web"`` and the acting token's user); its response's payload, or
        ``KandevRefused`` carrying the error frame's ``code``."""
        frame = self.ws_frame("permission.respond", seeded.resolve_arguments(option_id))
        payload = frame.get("payload") or {}
        if frame.get("type") == "error":
            raise KandevRefused(
                "permission.respond",
                code=str(payload.get("code") or ""),
                text=str(payload.get("message") or ""),
            )
        return dict(payload)

    def resolution(self, seeded: SeededPermission) -> dict[str, Any] | None:
        """The request's ``metadata.permission_resolution`` once it is final (Kandev's
        ``actor_user_id``, ``actor_kind``, ``source``, ``option_id``…), else ``None``."""
        for message in self.messages(seeded.session_id):
            metadata = message.get("metadata") or {}
            if metadata.get("request_id") != seeded.request_id:
                continue
            resolution = metadata.get("permission_resolution") or {}
            if resolution.get("finalized_at"):
                return dict(resolution)
        return None

    def agent_outcomes(
        self, task_id: str, count: int = 1, *, timeout: float = 15.0
    ) -> builtins.list[dict[str, Any]]:
        """What the agent got for its first ``count`` requests, once it has (``outcome``: the
        ACP outcome, None when it gave up; ``withdrawn``)."""
        deadline = time.monotonic() + timeout
        while True:
            got = (self.server.agent_record(task_id) or {}).get("permissions") or []
            if len(got) >= count:
                return list(got)
            if time.monotonic() > deadline:
                raise KandevHarnessError(f"the agent of {task_id} got {got!r}, not {count}")
            time.sleep(POLL_INTERVAL)

    def messages(self, session_id: str) -> builtins.list[dict[str, Any]]:
        """The session's ``permission_request`` messages, oldest first."""
        path = f"/task-sessions/{quote(session_id, safe='')}/messages"
        http = self.server.http_as(self._for_session(session_id))
        response = http.get(path, params={"limit": 200, "sort": "asc"})
        response.raise_for_status()
        rows = response.json().get("messages") or []
        return [m for m in rows if m.get("type") == PERMISSION_TYPE]

    def session(self, session_id: str) -> dict[str, Any]:
        """``GET /api/v1/task-sessions/{id}``'s ``session`` (``cancellation_revision``…)."""
        http = self.server.http_as(self._for_session(session_id))
        response = http.get(f"/task-sessions/{quote(session_id, safe='')}")
        response.raise_for_status()
        data: dict[str, Any] = response.json()["session"]
        return data

    def ws_request(self, action: str, payload: dict[str, Any], timeout: float = 30.0) -> Any:
        """One request over the web UI's ``/ws`` (e.g. ``agent.cancel``, ``permission.respond``):
        its response's payload, or the error frame's."""
        return self.ws_frame(action, payload, timeout).get("payload")

    def ws_frame(
        self, action: str, payload: dict[str, Any], timeout: float = 30.0
    ) -> dict[str, Any]:
        """As ``ws_request``, the whole reply frame (``type`` ``response`` or ``error``); over
        ``/ws?token=`` the acting token (the one given, else the token of the payload's task or
        session, else the harness's)."""
        url = self.server.base_url.replace("http", "ws", 1) + "/ws"
        token = self._for_payload(payload)
        if token:
            url += f"?token={token}"
        request_id = uuid.uuid4().hex
        frame = {"id": request_id, "type": "request", "action": action, "payload": payload}
        deadline = time.monotonic() + timeout
        with connect(url, open_timeout=timeout) as socket:
            socket.send(json.dumps(frame))
            while True:
                reply = json.loads(socket.recv(timeout=max(0.1, deadline - time.monotonic())))
                if reply.get("id") == request_id:
                    return dict(reply)

    def stop_agent(self, session_id: str) -> Any:
        """``agent.stop`` for the session's agent execution (contract §5 I: the request is
        withdrawn, its message ``expired``)."""
        agent_id = self.session(session_id)["agent_execution_id"]
        return self.ws_request("agent.stop", {"agent_id": agent_id})

    def cancel_turn(self, session_id: str) -> Any:
        """``agent.cancel`` as the web UI's stop button sends it (contract §5: the pending
        request is not withdrawn, the session's ``cancellation_revision`` moves)."""
        return self.ws_request("agent.cancel", {"session_id": session_id})

    def _seeded(self, task_id: str, listed: dict[str, Any]) -> SeededPermission:
        self.server.remember_session(listed["session_id"], task_id)
        known = self.server._seeded.get(task_id)
        return SeededPermission(
            task_id=task_id,
            session_id=listed["session_id"],
            request_id=listed["request_id"],
            pending_id=listed["pending_id"],
            workspace_id=known.workspace_id if known else "",
            marker=known.marker if known else "",
            option_ids=tuple(o["option_id"] for o in listed.get("options") or []),
            listed=listed,
        )
