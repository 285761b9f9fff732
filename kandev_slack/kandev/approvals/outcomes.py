"""Resolving a tool-permission request: Kandev's reply → a typed outcome (contract §3).

=====================================  =============================================
``resolve_agent_permission_kandev``    outcome
=====================================  =============================================
``status: resolved``                   :class:`PermissionWon`
``[permission_already_resolved]``      read the transcript → :class:`PermissionLost`
``[permission_resolution_in_progress]``  (the winner), or ours after an ambiguous try
``[permission_option_not_offered]``    :class:`OptionNotOffered` (still answerable)
``[permission_stale]``                 :class:`PermissionWithdrawn`
``[permission_not_found]``             :class:`PermissionWithdrawn`
``[task_or_session_not_found]``        :class:`TaskOrSessionGone`
``[VALIDATION_ERROR]`` / schema        :class:`ResolveRefused` (nothing sent to the agent)
``[INTERNAL_ERROR]``                   read the transcript → pending: :class:`AgentStarting`
401                                    :class:`AuthRefused`
no reply, surely not delivered         :class:`KandevUnreachable`
no reply / unreadable / unknown code   read the transcript → Won/Lost/Withdrawn, else
                                       :class:`ResolveUnsettled` (never re-sent blindly)
=====================================  =============================================

A loser is not told the winner's choice, and a retry of one's own winning call after a lost
reply also gets ``permission_already_resolved``: the winner is read from the transcript
(``permission_resolution``) and compared with this choice (:func:`settle`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import ValidationError

from kandev_slack.kandev.approvals.wire import (
    PermissionChoice,
    PermissionRecord,
    PermissionReply,
    PermissionResolution,
)
from kandev_slack.kandev.errors import KandevValidationError
from kandev_slack.kandev.mcp.wire import ToolResult
from kandev_slack.kandev.models import Said
from kandev_slack.kandev.replies import aware, snippet

#: How far Kandev's clock (``selected_at``) may be behind the bot's.
CLOCK_TOLERANCE_S = 1.0


@dataclass(frozen=True)
class PermissionWon:
    """This choice reached the agent. ``settled``: decided from the transcript after a reply
    that did not say (ours by option, surface and time)."""

    option_id: str
    option_kind: str = ""
    settled: bool = False


@dataclass(frozen=True)
class PermissionLost:
    """Someone else's choice was (or is being) delivered: ``winner`` as the transcript has it
    (None: not readable yet). ``uncertain``: like ours, recorded while an attempt of ours may
    have been on its way, and the transcript cannot tell whose it was."""

    winner: PermissionResolution | None = None
    uncertain: bool = False


class OptionNotOffered(Said):
    """Kandev refused the option; the request stays live and answerable."""


class PermissionWithdrawn(Said):
    """The request is gone without a choice (stale, not found: agent stopped, new turn,
    Kandev restarted)."""


class TaskOrSessionGone(Said):
    """The task or its session does not exist (any more)."""


class ResolveRefused(Said):
    """Kandev refused the call's arguments before any work (our bug); nothing was sent."""


class AgentStarting(Said):
    """``INTERNAL_ERROR`` and nothing recorded: transient (the agent is starting); retry."""


class AuthRefused(Said):
    """Kandev answered 401: the token is missing or invalid."""


class KandevUnreachable(Said):
    """No reply, and the call surely did not reach Kandev: safe to send again later."""


@dataclass(frozen=True)
class ResolveUnsettled:
    """The call may have reached Kandev and nothing tells how it ended yet: read the
    transcript again later (:meth:`PermissionsClient.record`), never re-send blindly.
    ``still_pending``: the transcript shows no choice yet."""

    reason: str
    still_pending: bool = False


PermissionOutcome = (
    PermissionWon
    | PermissionLost
    | OptionNotOffered
    | PermissionWithdrawn
    | TaskOrSessionGone
    | ResolveRefused
    | AgentStarting
    | AuthRefused
    | KandevUnreachable
    | ResolveUnsettled
)


@dataclass(frozen=True)
class ReadTranscript:
    """The reply does not end it: the transcript decides (:func:`settle`).
    ``claimed``: Kandev said someone's choice is (being) recorded; ``unclaimed``: Kandev
    failed before any claim (INTERNAL_ERROR)."""

    reason: str
    claimed: bool = False
    unclaimed: bool = False


def classify(result: ToolResult) -> PermissionOutcome | ReadTranscript:
    """The outcome a resolve's reply gives by itself, or what to read next."""
    if not result.is_error:
        try:
            reply = PermissionReply.model_validate_json(result.text)
        except ValidationError:
            return ReadTranscript(f"resolve answered something unreadable: {snippet(result.text)}")
        return PermissionWon(option_id=reply.option_id, option_kind=reply.option_kind)
    error = result.error()
    match error.code:
        case "permission_already_resolved" | "permission_resolution_in_progress":
            return ReadTranscript(error.message, claimed=True)
        case "permission_option_not_offered":
            return OptionNotOffered(error.message)
        case "permission_stale" | "permission_not_found":
            return PermissionWithdrawn(error.message)
        case "task_or_session_not_found":
            return TaskOrSessionGone(error.message)
        case "INTERNAL_ERROR":
            return ReadTranscript(error.message, unclaimed=True)
    if isinstance(error, KandevValidationError):
        return ResolveRefused(error.message)
    return ReadTranscript(f"resolve failed with {error.code}: {snippet(error.message)}")


def settle(
    choice: PermissionChoice,
    step: ReadTranscript,
    record: PermissionRecord | None,
    *,
    maybe_mine: bool,
    first_sent: datetime,
) -> PermissionOutcome:
    """Decide from the transcript. ``record``: the request's ``permission_request`` message
    (None: not found or not readable). ``maybe_mine``: an attempt of this choice may have
    reached Kandev before this reply (a re-send after a crash or a lost reply)."""
    if record is None or not (record.claimed or record.withdrawn):
        if step.claimed and not maybe_mine:
            return PermissionLost(None)  # someone's claim, not written down yet
        if record is not None and step.unclaimed:
            return AgentStarting(step.reason)
        return ResolveUnsettled(step.reason, still_pending=record is not None)
    if record.withdrawn:
        return PermissionWithdrawn(f"the request ended without a choice ({step.reason})")
    winner = record.resolution
    assert winner is not None  # record.claimed
    if winner.option_id != choice.option_id or (step.claimed and not maybe_mine):
        return PermissionLost(winner)
    return _ours_or_other(winner, first_sent)


def _ours_or_other(winner: PermissionResolution, first_sent: datetime) -> PermissionOutcome:
    """A winner with our option, after an attempt of ours may have reached Kandev: ours when
    chosen over MCP after we first sent it; someone else's when chosen before (or on another
    surface); uncertain within the clocks' tolerance or without a time."""
    if winner.source and winner.source != "external_mcp":
        return PermissionLost(winner)
    if winner.selected_at is None:
        return PermissionLost(winner, uncertain=True)
    before = (aware(first_sent) - aware(winner.selected_at)).total_seconds()
    if before > CLOCK_TOLERANCE_S:
        return PermissionLost(winner)
    if before > 0:
        return PermissionLost(winner, uncertain=True)
    return PermissionWon(winner.option_id, winner.option_kind, settled=True)
