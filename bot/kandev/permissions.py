"""Agent tool-permission requests on Kandev: list a task's live ones, resolve one, read how
one ended (the transcript), and a session's cancellation revision (kandev-permissions.md).

There is no global list and no permission-specific push: callers find candidate tasks
(``session.pending_action_changed`` hints, a workspace's tasks whose ``task_pending_action`` is
``permission``, a stale hint after a restart) and confirm each with :meth:`list_pending`.
A resolve is sent once and never re-sent blindly: anything ambiguous is settled by reading the
transcript (see ``permission_outcomes``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from bot.kandev.errors import (
    KandevAgentStarting,
    KandevAuthError,
    KandevError,
    KandevNotFoundError,
    KandevProtocolError,
    KandevToolError,
    KandevUnavailable,
    KandevUnconfirmed,
)
from bot.kandev.http import KandevHttp
from bot.kandev.mcp import McpSession
from bot.kandev.permission_outcomes import (
    AuthRefused,
    KandevUnreachable,
    PermissionOutcome,
    ReadTranscript,
    classify,
    settle,
)
from bot.kandev.permission_wire import (
    PERMISSION_MESSAGE_TYPE,
    PermissionCandidate,
    PermissionChoice,
    PermissionList,
    PermissionPage,
    PermissionRecord,
    PermissionRequest,
    SessionCancellation,
    WorkspaceTaskPage,
)
from bot.kandev.replies import json_200, validate

LIST_TOOL = "list_pending_agent_permissions_kandev"
RESOLVE_TOOL = "resolve_agent_permission_kandev"
CONVERSATION_TOOL = "get_task_conversation_kandev"


class PermissionsClient:
    """The permission calls, on the Kandev client's HTTP transport and MCP session.

    ``starting_attempts``/``starting_delay``: how often, and how far apart, a list is tried
    while Kandev answers ``INTERNAL_ERROR`` (an agent starting: observed for about a second).
    """

    def __init__(
        self,
        http: KandevHttp,
        mcp: McpSession,
        *,
        page_size: int = 100,
        max_pages: int = 20,
        starting_attempts: int = 3,
        starting_delay: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self._http = http
        self._mcp = mcp
        self._page_size = page_size
        self._max_pages = max_pages
        self._starting_attempts = max(1, starting_attempts)
        self._starting_delay = starting_delay
        self._sleep = sleep

    def list_pending(self, task_id: str, session_id: str | None = None) -> list[PermissionRequest]:
        """The task's live requests (an unknown task has none). Raises
        :class:`KandevAgentStarting` when Kandev kept answering INTERNAL_ERROR,
        :class:`KandevNotFoundError` when ``session_id`` is not the task's."""
        arguments: dict[str, Any] = {"task_id": task_id}
        if session_id:
            arguments["session_id"] = session_id
        for attempt in range(1, self._starting_attempts + 1):
            try:
                data = self._mcp.call_tool_json(LIST_TOOL, arguments)
            except KandevToolError as exc:
                if exc.code == "task_or_session_not_found":
                    raise KandevNotFoundError(exc.code, exc.message) from exc
                if exc.code != "INTERNAL_ERROR":
                    raise
                if attempt == self._starting_attempts:
                    raise KandevAgentStarting(exc.code, exc.message) from exc
                self._sleep(self._starting_delay)
                continue
            return list(validate(PermissionList, data).permissions)
        raise AssertionError("unreachable")  # pragma: no cover

    def resolve(
        self, choice: PermissionChoice, *, resend: bool = False, first_sent: datetime | None = None
    ) -> PermissionOutcome:
        """Send ``choice`` once (no automatic retry) and say how it ended; never raises.
        ``resend``: this very choice may have reached Kandev before (the process died while
        sending it at ``first_sent``): an "already resolved" is then checked against the
        transcript for being ours."""
        first_sent = first_sent or datetime.now(UTC)
        step: PermissionOutcome | ReadTranscript
        try:
            result = self._mcp.call_tool(RESOLVE_TOOL, choice.tool_arguments(), retry=False)
        except KandevAuthError as exc:
            return AuthRefused(str(exc))
        except (KandevUnconfirmed, KandevProtocolError) as exc:
            # It may have reached Kandev (no reply, or one that is not MCP's).
            step, maybe_mine = ReadTranscript(str(exc)), True
        except KandevUnavailable as exc:
            return KandevUnreachable(str(exc))
        else:
            step, maybe_mine = classify(result), resend or result.maybe_duplicate
        if not isinstance(step, ReadTranscript):
            return step
        record = self._record_or_none(choice)
        return settle(choice, step, record, maybe_mine=maybe_mine, first_sent=first_sent)

    def record(self, task_id: str, session_id: str, request_id: str) -> PermissionRecord | None:
        """The request's ``permission_request`` message (newest pages first): its status and
        who chose what (None: not in the session's transcript, or an unknown task). An
        unreadable reply raises a :class:`KandevError`: try again, it is not an answer."""
        arguments: dict[str, Any] = {
            "task_id": task_id,
            "session_id": session_id,
            "message_types": [PERMISSION_MESSAGE_TYPE],
            "sort": "desc",
            "limit": self._page_size,
        }
        for _ in range(self._max_pages):
            try:
                data = self._mcp.call_tool_json(CONVERSATION_TOOL, arguments)
            except KandevNotFoundError:
                return None
            page = validate(PermissionPage, data)
            found = page.record(request_id)
            if found is not None or not page.has_more or not page.cursor:
                return found
            arguments["before"] = page.cursor
        raise KandevProtocolError(
            f"{CONVERSATION_TOOL}: {request_id} not in the last {self._max_pages} pages"
        )

    def cancellation(self, session_id: str) -> SessionCancellation | None:
        """The session's cancellation state (None: no such session). Record ``revision`` when
        a request is first seen: a later one means its turn may have been cancelled, and
        resolving it would wedge the session (Kandev's bug, contract §5)."""
        path = f"/api/v1/task-sessions/{quote(session_id, safe='')}"
        response = self._http.request("GET", path).response
        if response.status_code == 404:
            return None
        data = json_200(response)
        session = data.get("session") if isinstance(data, dict) else None
        return validate(SessionCancellation, session)

    def candidates(self, workspace_id: str, *, page_size: int = 100) -> list[PermissionCandidate]:
        """The workspace's tasks whose pending action says ``permission``, every page (the
        sweep's candidates). Only a hint: the flag stays set after a Kandev restart although
        nothing is live, so confirm each with :meth:`list_pending`."""
        path = f"/api/v1/workspaces/{quote(workspace_id, safe='')}/tasks"
        found: list[PermissionCandidate] = []
        seen = 0
        for page_number in range(1, self._max_pages + 1):
            params = {"page": page_number, "page_size": page_size}
            response = self._http.request("GET", path, params=params).response
            page = validate(WorkspaceTaskPage, json_200(response))
            found.extend(page.candidates())
            seen += len(page.tasks)
            if not page.tasks or seen >= page.total:
                return found
        raise KandevProtocolError(f"{path}: more than {self._max_pages} pages of tasks")

    def _record_or_none(self, choice: PermissionChoice) -> PermissionRecord | None:
        try:
            return self.record(choice.task_id, choice.session_id, choice.request_id)
        except KandevError:
            return None
