"""Agent tool-permission requests on Kandev: list a task's live ones, resolve one, read how
one ended (the transcript), and a session's cancellation revision (kandev-permissions.md).

There is no global list and no permission-specific push: callers find candidate tasks
(``session.pending_action_changed`` hints, a workspace's tasks whose ``task_pending_action`` is
``permission``, a stale hint after a restart) and confirm each with :meth:`list_pending`.
A resolve is sent once and never re-sent blindly: anything ambiguous is settled by reading the
transcript (see ``permission_outcomes``)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import quote

from kandev_slack.core.approval import CANCELLED_OPTION, Approval
from kandev_slack.core.clarification import Answer
from kandev_slack.kandev import models
from kandev_slack.kandev.approvals.outcomes import (
    AgentStarting,
    AuthRefused,
    KandevUnreachable,
    OptionNotOffered,
    PermissionLost,
    PermissionOutcome,
    PermissionWithdrawn,
    PermissionWon,
    ReadTranscript,
    ResolveRefused,
    ResolveUnsettled,
    TaskOrSessionGone,
    classify,
    settle,
)
from kandev_slack.kandev.approvals.wire import (
    PERMISSION_MESSAGE_TYPE,
    PermissionCandidate,
    PermissionChoice,
    PermissionList,
    PermissionPage,
    PermissionRecord,
    PermissionRequest,
    PermissionResolution,
    SessionCancellation,
    SessionTurns,
    TaskState,
    WorkspaceTaskPage,
)
from kandev_slack.kandev.errors import (
    KandevAgentStarting,
    KandevAuthError,
    KandevError,
    KandevNotFoundError,
    KandevProtocolError,
    KandevToolError,
    KandevUnavailable,
    KandevUnconfirmed,
)
from kandev_slack.kandev.http import KandevHttp
from kandev_slack.kandev.mcp.session import McpSession
from kandev_slack.kandev.replies import json_200, validate, validated_200

LIST_TOOL = "list_pending_agent_permissions_kandev"
#: How long, and how often, the winner of a claim Kandev has not written down yet is read.
WINNER_READS = 10
WINNER_READ_S = 0.1
RESOLVE_TOOL = "resolve_agent_permission_kandev"
CONVERSATION_TOOL = "get_task_conversation_kandev"


class PermissionsClient:
    """The permission calls, on the Kandev client's HTTP transport and MCP session.

    ``starting_attempts``/``starting_delay``: how often, and how far apart, a list is tried
    while Kandev answers ``INTERNAL_ERROR`` (an agent starting: observed for about a second).
    ``max_pages``: how many pages of one session's transcript are read for a request's record;
    a workspace's tasks are read to the last page, however many (``tasks_page_size`` each).
    """

    def __init__(
        self,
        http: KandevHttp,
        mcp: McpSession,
        *,
        page_size: int = 100,
        max_pages: int = 20,
        tasks_page_size: int = 100,
        starting_attempts: int = 3,
        starting_delay: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self._http = http
        self._mcp = mcp
        self._page_size = page_size
        self._max_pages = max_pages
        self.tasks_page_size = max(1, tasks_page_size)
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

    def approve(
        self,
        approval: Approval,
        option_id: str,
        *,
        first_sent: datetime,
        resend: bool = False,
    ) -> models.Outcome:
        """Resolve ``approval`` with ``option_id`` for a person, as the answer pipeline takes
        outcomes (kandev_slack/kandev/models.py). Refused before sending when the session's turn was
        cancelled since the request was seen (resolving would wedge it: contract §5).
        Raises :class:`KandevUnavailable` / :class:`KandevAuthError` when nothing reached
        Kandev (the person may send it again), a refused token also when the session's turn
        was read before sending."""
        refused = self._turn_cancelled(approval)
        if refused is not None:
            return refused
        choice = PermissionChoice.of(approval, option_id)
        outcome = self.resolve(choice, resend=resend, first_sent=first_sent)
        if isinstance(outcome, PermissionLost) and outcome.winner is None:
            outcome = self._winner(choice, outcome)
        return as_outcome(approval, outcome)

    def read_back(
        self, approval: Approval, option_id: str, *, first_sent: datetime
    ) -> models.Outcome | None:
        """What the transcript shows for this choice, sending nothing (None: it does not tell
        yet, or cannot be read)."""
        choice = PermissionChoice.of(approval, option_id)
        try:
            record = self.record(choice.task_id, choice.session_id, choice.request_id)
        except KandevError:
            return None
        step = ReadTranscript("read back")
        settled = settle(choice, step, record, maybe_mine=True, first_sent=first_sent)
        if isinstance(settled, ResolveUnsettled):
            return None
        return as_outcome(approval, settled)

    def _turn_cancelled(self, approval: Approval) -> models.Outcome | None:
        """Refused (sending nothing) when the turn that asked is over: cancelled since the
        request was seen (its revision moved, or a cancel is under way), or ended whatever the
        revision (cancelled before the request was seen, or given up on by the agent) with
        the request still listed (an answer ends the turn too, once the request left the list:
        then the resolve says who chose first)."""
        try:
            now = self.cancellation(approval.session_id)
            if now is None:
                return models.NotFound("the session is gone")
            revision = approval.cancellation_revision
            moved = now.pending or (revision is not None and now.revision != revision)
            if not moved and not self._orphaned(approval):
                return None
        except (KandevUnavailable, KandevAuthError):
            raise  # a refused token is the caller's to tell (a person's: their link breaks)
        except KandevError as exc:
            raise KandevUnavailable(f"cannot read the session's turn: {exc}") from exc
        return models.NotActive("the agent's turn was cancelled", reason="turn_cancelled")

    def _orphaned(self, approval: Approval) -> bool:
        """Its turn has ended and Kandev still lists it (None from the turns: gone)."""
        if not self.turn_ended(approval.session_id, approval.created_at):
            return False
        try:
            listed = self.list_pending(approval.task_id, approval.session_id)
        except (KandevAgentStarting, KandevNotFoundError):
            return False
        return approval.request_id in {r.request_id for r in listed}

    def _winner(self, choice: PermissionChoice, lost: PermissionLost) -> PermissionOutcome:
        """Someone's claim that Kandev had not written down when asked: read it (it is
        written a few milliseconds later)."""
        for _ in range(WINNER_READS):
            record = self._record_or_none(choice)
            if record is not None and record.claimed and record.resolution is not None:
                return PermissionLost(record.resolution)
            self._sleep(WINNER_READ_S)
        return ResolveUnsettled("someone else's choice is not in the transcript yet")

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

    def turn_ended(self, session_id: str, asked_at: datetime) -> bool | None:
        """Whether the session's turn that asked at ``asked_at`` has ended (None: Kandev says
        404, no such session; an unknown one may also list no turns: False). Kandev keeps
        listing a request whose turn was cancelled or given up on, and resolving it would wedge
        the session (contract §5): such a request is not answered."""
        path = f"/api/v1/task-sessions/{quote(session_id, safe='')}/turns"
        response = self._http.request("GET", path).response
        if response.status_code == 404:
            return None
        return validated_200(SessionTurns, response).ended(asked_at)

    def candidates(
        self, workspace_id: str, *, page_size: int | None = None
    ) -> list[PermissionCandidate]:
        """The workspace's tasks whose pending action says ``permission``, every page however
        many there are. Only a hint: the flag stays set after a Kandev restart although
        nothing is live, so confirm each with :meth:`list_pending`."""
        return [
            PermissionCandidate(task_id=s.task_id, session_id=s.session_id)
            for s in self.task_states(workspace_id, page_size=page_size)
            if s.flagged
        ]

    def task_states(self, workspace_id: str, *, page_size: int | None = None) -> list[TaskState]:
        """Every task of the workspace as its task list shows it (whether it is flagged
        ``permission``, and a mark of its row's state), every page however many there are
        (the sweep's reads). A page that brings no task not seen before (Kandev ignoring
        ``page``) raises :class:`KandevProtocolError` rather than reading forever."""
        path = f"/api/v1/workspaces/{quote(workspace_id, safe='')}/tasks"
        size = max(1, page_size or self.tasks_page_size)
        found: list[TaskState] = []
        seen: set[str] = set()
        for page_number in itertools.count(1):
            params = {"page": page_number, "page_size": size}
            response = self._http.request("GET", path, params=params).response
            page = validated_200(WorkspaceTaskPage, response)
            states = page.states()
            ids = {s.task_id for s in states}
            if not ids:
                return found
            if ids <= seen:
                raise KandevProtocolError(f"{path}: page {page_number} repeats earlier tasks")
            found.extend(s for s in states if s.task_id not in seen)
            seen |= ids
            if len(seen) >= page.total or len(page.tasks) < size:
                return found
        raise AssertionError("unreachable")  # pragma: no cover

    def _record_or_none(self, choice: PermissionChoice) -> PermissionRecord | None:
        try:
            return self.record(choice.task_id, choice.session_id, choice.request_id)
        except KandevError:
            return None


def _resolution(
    approval: Approval, option_id: str, option_kind: str, at: datetime | None, actor: str = ""
) -> models.Resolution:
    """A choice as the answer pipeline records resolutions: ``answered`` for an allow,
    ``rejected`` for a reject, the option as the one answer, and who chose (``actor``: the
    Kandev account Kandev recorded, when it is a person's)."""
    status: Literal["answered", "rejected"] = (
        "answered" if approval.allows(option_id, option_kind) else "rejected"
    )
    answer = Answer(question_id="", selected_options=[option_id])
    return models.Resolution(status=status, answers=[answer], responded_at=at, actor_user_id=actor)


def _winner_resolution(approval: Approval, winner: PermissionResolution) -> models.Resolution:
    return _resolution(
        approval, winner.option_id, winner.option_kind, winner.selected_at, winner.actor
    )


def as_outcome(approval: Approval, outcome: PermissionOutcome) -> models.Outcome:
    """A permission outcome as the answer pipeline's (kandev_slack/kandev/models.py) — raising what
    that pipeline expects when nothing reached Kandev."""
    match outcome:
        case PermissionWon(option_id=option_id, option_kind=kind):
            return models.Won(_resolution(approval, option_id, kind, None))
        case PermissionLost(winner=winner, uncertain=uncertain) if winner is not None:
            if winner.option_id == CANCELLED_OPTION:
                return models.NotActive("cancelled in Kandev", reason="cancelled")
            return models.Lost(_winner_resolution(approval, winner), uncertain=uncertain)
        case PermissionLost():
            return models.Unconfirmed("someone else's choice is not readable yet", True)
        case OptionNotOffered(message=m) | ResolveRefused(message=m):
            return models.Invalid(m)
        case PermissionWithdrawn(message=m):
            return models.NotActive(m)
        case TaskOrSessionGone(message=m):
            return models.NotFound(m)
        case AgentStarting(message=m):
            return models.NotRecorded(f"the agent is starting: {m}", retry_after=1.0)
        case AuthRefused(message=m):
            raise KandevAuthError(m)
        case KandevUnreachable(message=m):
            raise KandevUnavailable(m)
        case ResolveUnsettled(reason=r):
            return models.Unconfirmed(r, earlier_attempt=True)
    raise AssertionError(f"unexpected permission outcome {outcome!r}")
