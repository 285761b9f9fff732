"""Typed models of what Kandev sends and receives (its wire format; the contract tests check
them against a real Kandev)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kandev_slack.core.clarification import Answer


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Resolution(_Wire):
    """How a bundle was resolved (the winner's resolution, as Kandev reports it)."""

    status: Literal["answered", "rejected"]
    answers: list[Answer] = Field(default_factory=list)
    reject_reason: str = ""
    responded_at: datetime | None = None
    #: The Kandev account that made it, when Kandev records one: an approval's
    #: ``permission_resolution.actor_user_id`` (its token's owner; "" for a clarification,
    #: whose answers Kandev keeps no author of, and with auth off).
    actor_user_id: str = ""


FinalStatus = Literal["pending", "answered", "rejected", "cancelled", "expired", "unknown"]


class FinalState(_Wire):
    """How a bundle that left the active list ended, read from the task conversation."""

    status: FinalStatus
    answers: list[Answer] = Field(default_factory=list)
    #: When Kandev recorded an answer or rejection (its messages' update time; None: unsaid).
    responded_at: datetime | None = None


#: Kandev's task priorities; ``medium`` is the default.
PRIORITIES = ("low", "medium", "high", "critical")
DEFAULT_PRIORITY = "medium"


class Task(_Wire):
    id: str
    title: str = ""
    workspace_id: str = ""
    description: str = ""
    priority: str = DEFAULT_PRIORITY
    #: Kandev sends the labels as a JSON-encoded string array (``"[\"database\"]"``).
    labels: tuple[str, ...] = ()
    primary_agent_name: str = ""
    state: str = ""
    #: The task's human assignee (a Kandev user id; "" when unset: Kandev leaves the key out).
    assignee_user_id: str = ""

    @field_validator("labels", mode="before")
    @classmethod
    def _decode_labels(cls, value: object) -> object:
        if value is None or value == "":
            return ()
        if isinstance(value, str):
            text = value
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise ValueError(f"labels are not a JSON array: {text[:80]!r}") from exc
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("labels must be an array of strings")
        return tuple(value)

    @field_validator("priority", "primary_agent_name", "state", "assignee_user_id", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return "" if value is None else value


class SessionMessage(_Wire):
    """One message of a task session (``GET /api/v1/task-sessions/{id}/messages``)."""

    id: str = ""
    author_type: str = ""  # user | agent
    type: str = ""  # message, tool_*, clarification_request, status, script_execution…
    content: str = ""
    metadata: dict | None = None
    created_at: datetime | None = None

    @field_validator("content", "author_type", "type", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return "" if value is None else value


class SessionMessages(_Wire):
    """The last messages of a session, oldest first; ``complete``: nothing older exists."""

    messages: tuple[SessionMessage, ...] = ()
    complete: bool = True


class Workspace(_Wire):
    id: str
    name: str = ""
    #: With auth on: who owns it, the token's role there (owner / collaborator / viewer) and
    #: what that role may do (``session.prompt``: prompt agents, so answer and approve).
    owner_id: str = ""
    viewer_role: str = ""
    scopes: tuple[str, ...] = ()

    @field_validator("scopes", mode="before")
    @classmethod
    def _no_scopes(cls, value: object) -> object:
        return () if value is None else value


class KandevUser(_Wire):
    """A Kandev account, as ``GET /api/v1/auth/me`` describes the token's owner."""

    id: str
    email: str = ""
    display_name: str = ""
    role: str = ""
    status: str = ""


class UserName(_Wire):
    """One Kandev account as a list of users names it: its id and display name (admin
    ``GET /api/v1/users`` rows carry more; a member's ``/api/v1/users/directory`` only these)."""

    id: str = Field(min_length=1)
    display_name: str = ""

    @field_validator("display_name", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return "" if value is None else value


class UserNames(_Wire):
    """``GET /api/v1/users`` (admin) or ``GET /api/v1/users/directory`` (any member)."""

    users: tuple[UserName, ...] = ()

    @field_validator("users", mode="before")
    @classmethod
    def _no_users(cls, value: object) -> object:
        return () if value is None else value


# ---- outcomes of an answer/reject call -------------------------------------------------


@dataclass(frozen=True)
class _Claimed:
    """The bundle is claimed; ``resolution`` is what Kandev recorded."""

    resolution: Resolution


class Won(_Claimed):
    """This call claimed the bundle; ``resolution`` is what was recorded."""


@dataclass(frozen=True)
class Lost(_Claimed):
    """Someone else claimed it first; ``resolution`` is the winner's.

    ``uncertain``: the winner's resolution is like this submission's and was recorded while an
    earlier attempt of it may have been on its way (a maybe-delivered call, a re-send), and
    what Kandev recorded cannot tell whose it was: the winner is "in Kandev", and the person
    must hear that someone else may have answered first."""

    uncertain: bool = False


@dataclass(frozen=True)
class Said:
    """An outcome Kandev told in words, ``message`` (a refusal, a reason the call did not go)."""

    message: str


@dataclass(frozen=True)
class NotActive(Said):
    """409: no longer active and nobody won (cancelled, expired, superseded, ended).
    ``reason``: how an approval ended when it is known (``cancelled``: cancelled in Kandev;
    ``turn_cancelled``: refused before sending, the agent's turn was cancelled)."""

    reason: str = ""


class Invalid(Said):
    """400: Kandev refused the submission (checked before any claim)."""


class NotFound(Said):
    """404: unknown id, or not visible to this token."""


@dataclass(frozen=True)
class NotRecorded:
    """Kandev surely did not record this call: it was refused before any work was done (401,
    403, 422, 429, another 4xx, a 5xx after which the bundle is answerable again, a reply that is
    not Kandev's) or it never reached Kandev. Nothing changed; the same answer may be sent again,
    after ``retry_after`` seconds when Kandev asked for a pause."""

    reason: str
    retry_after: float | None = None


@dataclass(frozen=True)
class Unconfirmed:
    """The call may have been recorded, but no reply said what happened (an unreadable 2xx, or
    a "not recorded" reply to a re-send after an earlier attempt may have reached Kandev).
    What Kandev recorded must be found out, not guessed: by re-sending the same answer (safe),
    or, once Kandev is done with every attempt, by reading its record. ``earlier_attempt``: an
    attempt without a reply may still be under way in Kandev, so its record cannot tell yet."""

    reason: str
    earlier_attempt: bool = False


Outcome = Won | Lost | NotActive | Invalid | NotFound | NotRecorded | Unconfirmed


# ---- health of the connection (``kandev-slack check``) --------------------------------


class ProbeResult(BaseModel):
    """What ``KandevClient.probe()`` found. ``None`` means "not checked" (an earlier step
    failed). ``version`` comes from ``/health`` (``None`` if Kandev did not say)."""

    model_config = ConfigDict(frozen=True)

    base_url: str
    reachable: bool
    ready: bool = False
    auth_ok: bool | None = None
    mcp_ok: bool | None = None
    version: str | None = None
    token_sent: bool = False
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.reachable and self.ready and bool(self.auth_ok) and bool(self.mcp_ok)


@dataclass(frozen=True)
class ActiveList:
    """Kandev's whole active list, oldest first, as its ids (its new bundles are handed over
    page by page as they are read: ``KandevClient.list_active``)."""

    #: Every listed bundle's pending id.
    ids: list[str]
    #: Kandev's creation time of the newest listed bundle (None: nothing listed).
    newest: datetime | None
