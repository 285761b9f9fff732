"""Wire models of Kandev's agent tool-permission requests (kandev-permissions.md, v0.95.1).

- :class:`PermissionRequest`: one entry of ``list_pending_agent_permissions_kandev``. It
  carries the list's **redacted** ``action`` only: the entry's ``title`` and the transcript's
  tool-call title are never read (the tool-call message keeps secrets the list redacts, e.g.
  a URL's ``?token=…``).
- :class:`PermissionChoice`: what a resolve sends (the five ids, serialised explicitly).
- :class:`PermissionReply`: the success envelope of ``resolve_agent_permission_kandev``.
- :class:`PermissionRecord`: the ``permission_request`` message of the transcript, read for
  its ``status`` and ``permission_resolution`` (who chose what, where, when).
- :class:`SessionCancellation`: a session's ``cancellation_revision`` (the tell-tale of
  Kandev's cancelled-turn bug, contract §5).
- :class:`SessionTurns`: a session's turns (``GET /api/v1/task-sessions/{id}/turns``): a
  request whose turn has ``completed_at`` was cancelled or given up on, whatever the revision.
- :class:`WorkspaceTaskPage`: a page of a workspace's tasks, read for the ones whose pending
  action says ``permission`` (:class:`PermissionCandidate`: a hint, stale after a restart).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kandev_slack.core.approval import Approval, ToolAction, ToolOption

PERMISSION_MESSAGE_TYPE = "permission_request"
#: ``permission_resolution.actor_kind`` with Kandev's auth off: nobody in particular.
SYNTHETIC_ACTOR = "synthetic"

#: ``metadata.status`` of a ``permission_request`` message ("" = the key is absent: not
#: resolved yet, or Kandev restarted under it).
RecordStatus = Literal["", "approved", "rejected", "expired"]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class PermissionRequest(_Wire):
    """One live request, as listed."""

    task_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    request_id: str = Field(min_length=1)
    pending_id: str = Field(min_length=1)
    tool_call_id: str = ""
    status: str = "pending"
    created_at: datetime
    action: ToolAction = Field(default_factory=ToolAction)
    options: tuple[ToolOption, ...] = Field(min_length=1)

    def option(self, option_id: str) -> ToolOption | None:
        return next((o for o in self.options if o.option_id == option_id), None)

    def approval(self, *, cancellation_revision: int | None = None) -> Approval:
        """The domain's approval of this request (what its card keeps)."""
        return Approval(
            task_id=self.task_id,
            session_id=self.session_id,
            request_id=self.request_id,
            pending_id=self.pending_id,
            created_at=self.created_at,
            action=self.action,
            options=self.options,
            cancellation_revision=cancellation_revision,
        )

    def choose(self, option_id: str) -> PermissionChoice:
        """The resolve that selects ``option_id`` (sent even when not offered: Kandev decides)."""
        return PermissionChoice.of(self, option_id)


class PermissionList(_Wire):
    """``list_pending_agent_permissions_kandev``'s reply (an unknown task lists nothing)."""

    task_id: str = ""
    total: int = 0
    permissions: tuple[PermissionRequest, ...] = ()


class PermissionChoice(_Wire):
    """One resolve: the ids exactly as listed, and the chosen option's id."""

    task_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    request_id: str = Field(min_length=1)
    pending_id: str = Field(min_length=1)
    option_id: str = Field(min_length=1)

    @classmethod
    def of(cls, request: PermissionRequest | Approval, option_id: str) -> PermissionChoice:
        """The resolve of ``request`` (as listed, or as its card keeps it) with ``option_id``."""
        return cls(
            task_id=request.task_id,
            session_id=request.session_id,
            request_id=request.request_id,
            pending_id=request.pending_id,
            option_id=option_id,
        )

    def tool_arguments(self) -> dict[str, Any]:
        """The MCP tool's arguments: the five ids by their wire names (the fields')."""
        return self.model_dump()


class PermissionReply(_Wire):
    """The resolve's success: ``status`` is always ``resolved``."""

    status: Literal["resolved"]
    option_id: str
    option_kind: str = ""
    request_id: str = ""
    pending_id: str = ""
    source: str = ""


class PermissionResolution(_Wire):
    """``metadata.permission_resolution``: the winner's choice. ``result`` is ``dispatching``
    while the claim is being delivered, ``accepted`` once it was; ``option_id`` is
    ``cancelled`` for the web UI's cancel."""

    option_id: str = ""
    option_kind: str = ""
    actor_kind: str = ""
    actor_user_id: str = ""
    source: str = ""
    result: str = ""
    selected_at: datetime | None = None
    finalized_at: datetime | None = None

    @property
    def actor(self) -> str:
        """The Kandev account that chose (its token's owner): "" when Kandev's auth is off (a
        ``synthetic`` actor, the same placeholder user whoever chose)."""
        return "" if self.actor_kind == SYNTHETIC_ACTOR else self.actor_user_id


class _RecordMeta(_Wire):
    request_id: str = ""
    pending_id: str = ""
    status: RecordStatus = ""
    permission_resolution: PermissionResolution | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return "" if value is None else value


class _TranscriptMessage(_Wire):
    id: str = ""
    type: str = ""
    metadata: _RecordMeta = Field(default_factory=_RecordMeta)


class PermissionPage(_Wire):
    """One page of ``get_task_conversation_kandev`` filtered to ``permission_request``
    (``cursor``: the last message id of the unfiltered page)."""

    messages: tuple[_TranscriptMessage, ...] = ()
    has_more: bool = False
    cursor: str = ""

    def record(self, request_id: str) -> PermissionRecord | None:
        for message in self.messages:
            meta = message.metadata
            if message.type == PERMISSION_MESSAGE_TYPE and meta.request_id == request_id:
                return PermissionRecord(
                    request_id=meta.request_id,
                    pending_id=meta.pending_id,
                    status=meta.status,
                    resolution=meta.permission_resolution,
                )
        return None


class PermissionRecord(_Wire):
    """How the transcript shows one request."""

    request_id: str
    pending_id: str = ""
    status: RecordStatus = ""
    resolution: PermissionResolution | None = None

    @property
    def claimed(self) -> bool:
        """Someone's choice is recorded (being delivered or delivered)."""
        return self.resolution is not None and bool(self.resolution.option_id)

    @property
    def withdrawn(self) -> bool:
        """It ended without anyone's choice (agent stopped, a new turn, Kandev restarted)."""
        return self.status == "expired" and not self.claimed


class SessionCancellation(_Wire):
    """``GET /api/v1/task-sessions/{id}``'s cancellation fields. ``revision`` moves on every
    ``agent.cancel``: a request listed under an older revision may belong to a cancelled turn
    (resolving it wedges the session, contract §5)."""

    state: str = ""
    pending: bool = Field(default=False, alias="cancellation_pending")
    revision: int = Field(default=0, alias="cancellation_revision")


class SessionTurn(_Wire):
    """One turn of a session: open while ``completed_at`` is absent."""

    id: str = ""
    started_at: datetime | None = None
    completed_at: datetime | None = None


class SessionTurns(_Wire):
    """``GET /api/v1/task-sessions/{id}/turns`` (every turn, oldest first). An agent asks for
    a permission inside a turn; once that turn has ended (``agent.cancel``, or the agent gave
    up) Kandev still lists the request, and resolving it wedges the session (contract §5)."""

    turns: tuple[SessionTurn, ...] = ()

    def ended(self, asked_at: datetime) -> bool:
        """Whether the turn a request asked at ``asked_at`` belongs to has ended: the last one
        started by then (the first when none was: clocks are Kandev's own). No turn at all:
        nothing is known to have ended."""
        if not self.turns:
            return False
        started = [t for t in self.turns if t.started_at is None or t.started_at <= asked_at]
        turn = started[-1] if started else self.turns[0]
        return turn.completed_at is not None


class _WorkspaceTask(_Wire):
    id: str = Field(min_length=1)
    primary_session_id: str | None = None
    task_pending_action: str | None = None
    primary_session_pending_action: str | None = None
    updated_at: str | None = None
    state: str | None = None
    primary_session_state: str | None = None
    session_count: int | None = None

    def as_state(self) -> TaskState:
        flagged = "permission" in (self.task_pending_action, self.primary_session_pending_action)
        # Every change seen on the wire moves ``updated_at`` (a new request, a resolution, a
        # cancelled turn, an agent giving up); the rest is there in case one does not.
        mark = "|".join(
            str(v or "")
            for v in (
                self.updated_at,
                self.state,
                self.primary_session_id,
                self.primary_session_state,
                self.task_pending_action,
                self.primary_session_pending_action,
                self.session_count,
            )
        )
        return TaskState(self.id, self.primary_session_id or "", flagged, mark)


class PermissionCandidate(_Wire):
    """A task whose pending action says ``permission``; ``session_id``: its primary session."""

    task_id: str
    session_id: str = ""


@dataclass(frozen=True, slots=True)
class TaskState:
    """One task as its workspace's task list shows it: its primary session, whether its
    pending action says ``permission`` (a hint, stale after a Kandev restart), and ``mark``,
    what the row says of its state (never empty): a row whose mark did not move since the
    last read says nothing changed there."""

    task_id: str
    session_id: str
    flagged: bool
    mark: str


class WorkspaceTaskPage(_Wire):
    """One page of ``GET /api/v1/workspaces/{id}/tasks`` (``page``, ``page_size``)."""

    tasks: tuple[_WorkspaceTask, ...] = ()
    total: int = 0

    def states(self) -> list[TaskState]:
        return [t.as_state() for t in self.tasks]
