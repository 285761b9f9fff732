"""Answering a bundle: request bodies and the mapping of Kandev's replies to an Outcome.

Both transports produce the same :data:`~kandev_slack.kandev.models.Outcome`:

========================  ===================================  ==============
REST respond              MCP ``answer_question_kandev``       Outcome
========================  ===================================  ==============
200 ``claimed: true``     ``claimed: true``                    Won
200 ``claimed: false``    ``claimed: false``                   Lost (winner)
400                       ``[VALIDATION_ERROR]`` / schema      Invalid
404                       ``[NOT_FOUND]``                      NotFound
409 ``not_active``        ``[CONFLICT]``                       NotActive
========================  ===================================  ==============

That is Kandev's documented table (:func:`outcome_from_rest`, :func:`outcome_from_tool`; they
raise on anything else). :func:`outcome_of_reply` and :func:`outcome_of_tool` make it total:

- any other status (401, 403, 422, 429, other 4xx, a 5xx handed back), and a 409 or 400 whose
  body is not Kandev's, → :class:`NotRecorded` (refused before any work was done; 429 carries
  its ``Retry-After``), as is an unknown tool error code;
- a 2xx (or a tool success) whose body is not the documented envelope → :class:`Unconfirmed`:
  Kandev did something, but the reply does not say what.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.errors import (
    KandevConflictError,
    KandevNotFoundError,
    KandevProtocolError,
    KandevToolError,
    KandevValidationError,
)
from kandev_slack.kandev.mcp.wire import ToolResult
from kandev_slack.kandev.models import (
    Invalid,
    Lost,
    NotActive,
    NotFound,
    NotRecorded,
    Outcome,
    Resolution,
    Unconfirmed,
    Won,
)
from kandev_slack.kandev.replies import aware, snippet

ANSWER_TOOL_NAME = "answer_question_kandev"


class Submission(BaseModel):
    """What we send: answers (one per question) or a rejection."""

    model_config = ConfigDict(frozen=True)

    answers: list[Answer] = Field(default_factory=list)
    rejected: bool = False
    reject_reason: str = ""

    @classmethod
    def answer(cls, answers: list[Answer]) -> Submission:
        return cls(answers=list(answers))

    @classmethod
    def reject(cls, reason: str = "") -> Submission:
        return cls(rejected=True, reject_reason=reason)

    def rest_body(self) -> dict[str, Any]:
        return {
            "answers": [a.model_dump() for a in self.answers],
            "rejected": self.rejected,
            "reject_reason": self.reject_reason,
        }

    def tool_arguments(self, pending_id: str) -> dict[str, Any]:
        if self.rejected:
            return {"pending_id": pending_id, "rejected": True, "reject_reason": self.reject_reason}
        return {"pending_id": pending_id, "answers": [a.model_dump() for a in self.answers]}

    def matches(self, resolution: Resolution) -> bool:
        """Whether ``resolution`` is what this submission would have recorded.

        Kandev trims free text and does not keep a rejection's reason, so neither is compared
        for rejections, and text is compared trimmed.
        """
        if self.rejected:
            return resolution.status == "rejected"
        if resolution.status != "answered":
            return False
        return _answer_set(self.answers) == _answer_set(resolution.answers)


def _answer_set(answers: list[Answer]) -> set[tuple[str, tuple[str, ...], str]]:
    return {(a.question_id, tuple(a.selected_options), a.custom_text.strip()) for a in answers}


class _ResponsePayload(BaseModel):
    model_config = ConfigDict(extra="ignore")

    answers: list[Answer] | None = None
    rejected: bool = False
    reject_reason: str = ""
    responded_at: datetime | None = None


class _RespondReply(BaseModel):
    """The success envelope shared by REST respond and ``answer_question_kandev``."""

    model_config = ConfigDict(extra="ignore")

    claimed: StrictBool
    status: Literal["answered", "rejected"]
    response: _ResponsePayload = Field(default_factory=_ResponsePayload)

    def outcome(self) -> Won | Lost:
        resolution = Resolution(
            status=self.status,
            answers=self.response.answers or [],
            reject_reason=self.response.reject_reason,
            responded_at=self.response.responded_at,
        )
        return Won(resolution) if self.claimed else Lost(resolution)


def _parse_reply(data: Any, source: str) -> Won | Lost:
    try:
        return _RespondReply.model_validate(data).outcome()
    except ValidationError as exc:
        raise KandevProtocolError(f"unexpected {source} reply: {data!r:.300}") from exc


def _error_message(body: str) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"]
    return body.strip()


def outcome_from_rest(status_code: int, body: str) -> Outcome:
    """Map a REST respond answer (any status but 401 and 5xx, handled by the transport)."""
    if status_code == 200:
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise KandevProtocolError(f"respond answered non-JSON 200: {body[:200]!r}") from exc
        return _parse_reply(data, "respond")
    message = _error_message(body)
    if status_code == 400:
        return Invalid(message)
    if status_code == 404:
        return NotFound(message)
    if status_code == 409:
        return NotActive(message)
    raise KandevProtocolError(f"respond answered HTTP {status_code}: {body[:200]!r}")


def outcome_of_reply(status_code: int, body: str, *, retry_after: float | None = None) -> Outcome:
    """Every REST respond reply (any status, any body) as an Outcome; never raises.

    A 400/404/409 counts as Kandev's verdict only with Kandev's error body (a JSON object with
    an ``error`` string): the same status with an HTML page or anything else comes from
    something between the bot and Kandev, and ending a card on it would be a guess."""
    if status_code in (400, 404, 409) and not _is_kandev_error(body):
        return NotRecorded(f"HTTP {status_code}, not Kandev's reply: {snippet(body)}")
    try:
        return outcome_from_rest(status_code, body)
    except KandevProtocolError:
        pass
    if 200 <= status_code < 300:
        return Unconfirmed(f"HTTP {status_code}, not Kandev's reply: {snippet(body)}")
    reason = f"HTTP {status_code}: {snippet(body)}"
    return NotRecorded(reason, retry_after if status_code == 429 else None)


def outcome_of_tool(result: ToolResult) -> Outcome:
    """Every ``answer_question_kandev`` result as an Outcome; never raises."""
    try:
        return outcome_from_tool(result)
    except KandevToolError as exc:
        return NotRecorded(f"{ANSWER_TOOL_NAME} failed: {snippet(str(exc))}")
    except KandevProtocolError:
        return Unconfirmed(f"{ANSWER_TOOL_NAME}: not Kandev's reply: {snippet(result.text)}")


def _is_kandev_error(body: str) -> bool:
    try:
        data = json.loads(body)
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("error"), str)


def outcome_from_tool(result: ToolResult) -> Outcome:
    """Map an ``answer_question_kandev`` result; unknown tool error codes are raised."""
    if not result.is_error:
        return _parse_reply(result.json(), "answer_question_kandev")
    error = result.error()
    if isinstance(error, KandevValidationError):
        return Invalid(error.message)
    if isinstance(error, KandevNotFoundError):
        return NotFound(error.message)
    if isinstance(error, KandevConflictError):
        return NotActive(error.message)
    raise error


#: How far Kandev's clock (``responded_at``) may be behind the bot's: a resolution recorded up to
#: this long before a submission was first sent may still be that submission's.
CLOCK_TOLERANCE_S = 1.0


def settle(
    outcome: Outcome,
    submission: Submission,
    *,
    maybe_duplicate: bool,
    first_sent: datetime | None = None,
) -> Outcome:
    """Recognise our own earlier attempt. After an ambiguous attempt (``maybe_duplicate``), a
    "not recorded" reply says nothing about the earlier attempt → Unconfirmed. A Lost whose
    winner is what we submitted is decided from what Kandev recorded (:func:`_own_or_other`)."""
    if maybe_duplicate and isinstance(outcome, NotRecorded):
        return Unconfirmed(
            f"an earlier attempt may have reached Kandev; then {outcome.reason}",
            earlier_attempt=True,
        )
    if maybe_duplicate and isinstance(outcome, Lost) and submission.matches(outcome.resolution):
        return _own_or_other(outcome, submission, first_sent)
    return outcome


def _own_or_other(lost: Lost, submission: Submission, first_sent: datetime | None) -> Outcome:
    """A winner like this submission, after an attempt of it may have reached Kandev: ours
    (Won) when Kandev recorded it after this submission was first sent; someone else's (Lost)
    when it recorded it before; uncertain (``Lost(uncertain=True)``) when that cannot be told:
    no ``responded_at`` (a conversation read), no send time, or within the clocks' tolerance.
    (A rejection's reason is not stored, so any rejection is "like" ours: only the time tells.)"""
    recorded, resolution = lost.resolution.responded_at, lost.resolution
    if recorded is None or first_sent is None:
        return Lost(resolution, uncertain=True)
    before = (aware(first_sent) - aware(recorded)).total_seconds()
    if before > CLOCK_TOLERANCE_S:
        return lost  # recorded before this submission left the bot: someone else's
    if before > 0:
        return Lost(resolution, uncertain=True)
    if submission.rejected:
        resolution = resolution.model_copy(update={"reject_reason": submission.reject_reason})
    return Won(resolution)
