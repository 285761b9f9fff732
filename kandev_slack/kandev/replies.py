"""Decoding Kandev's REST and MCP replies for the client: the page shapes, a 200 JSON reply,
a model validated or a protocol error, and the RFC 3339 times it is asked with."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kandev_slack.kandev.errors import KandevProtocolError
from kandev_slack.kandev.models import SessionMessage, Workspace

M = TypeVar("M", bound=BaseModel)


class RawPendingPage(BaseModel):
    """A page whose bundles are decoded later, one by one."""

    model_config = ConfigDict(extra="ignore")

    bundles: list[dict[str, Any]] = Field(default_factory=list)
    next_cursor: str = ""


class MessagePage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    messages: list[SessionMessage] = Field(default_factory=list)
    has_more: bool = False
    cursor: str = ""


class WorkspaceList(BaseModel):
    model_config = ConfigDict(extra="ignore")

    workspaces: list[Workspace] = Field(default_factory=list)


class HistoryBundle(BaseModel):
    """One row of the Needs-you inbox history: a bundle that went unanswered because its turn
    ended, and why (``superseded``, ``session_ended``, ``unreadable``)."""

    model_config = ConfigDict(extra="ignore")

    pending_id: str
    kind: str = "clarification"
    reason: str = ""


class InboxHistory(BaseModel):
    """``GET /api/v1/clarification-inbox/history?workspace_id=W``."""

    model_config = ConfigDict(extra="ignore")

    bundles: list[HistoryBundle] = Field(default_factory=list)


class HiddenRow(BaseModel):
    model_config = ConfigDict(extra="ignore")

    pending_id: str
    state: str = ""


class HiddenList(BaseModel):
    """``GET /api/v1/clarification-inbox/hidden?workspace_id=W``: what the token's owner
    snoozed or dismissed there."""

    model_config = ConfigDict(extra="ignore")

    bundles: list[HiddenRow] = Field(default_factory=list)

    def ids(self) -> list[str]:
        return [row.pending_id for row in self.bundles]


def rfc3339(moment: datetime) -> str:
    """UTC RFC3339 with whole seconds, rounded down (``created_since`` is inclusive)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _expect_200(response: httpx.Response) -> None:
    if response.status_code != 200:
        raise KandevProtocolError(
            f"{response.request.method} {response.request.url.path} answered HTTP "
            f"{response.status_code}: {response.text[:200]}"
        )


def _not_json(response: httpx.Response) -> KandevProtocolError:
    return KandevProtocolError(f"non-JSON reply: {response.text[:200]!r}")


def json_200(response: httpx.Response) -> Any:
    _expect_200(response)
    try:
        return response.json()
    except ValueError as exc:
        raise _not_json(response) from exc


def validated_200(model: type[M], response: httpx.Response) -> M:
    """A 200 reply's body as ``model``, parsed straight from its bytes: what the model leaves
    out (most of a task, say) never becomes Python objects, which a reply of 1,000 tasks
    otherwise costs in memory and time. Errors as :func:`json_200` and :func:`validate`."""
    _expect_200(response)
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors()):
            raise _not_json(response) from exc
        raise KandevProtocolError(f"unexpected {model.__name__} shape: {exc}") from exc


def validate(model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise KandevProtocolError(f"unexpected {model.__name__} shape: {exc}") from exc


def created_at_of(value: Any, source: str) -> datetime:
    """A bundle's ``created_at`` (RFC 3339; UTC when it names no offset) as ``source`` sent it."""
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise KandevProtocolError(f"{source}: a bundle's created_at is {value!r}")
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def snippet(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters, quoted (for error reasons)."""
    shown = " ".join(text.split())
    return repr(shown if len(shown) <= limit else shown[: limit - 1] + "…")


def aware(moment: datetime) -> datetime:
    """``moment`` with UTC assumed when it names no offset."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
