"""Whether an approval's turn is over while Kandev still lists its request (Kandev's bug,
kandev-permissions.md §5: a request whose turn was cancelled, or given up on by the agent,
stays listed and "resolvable", and resolving it wedges the session until Kandev restarts).

The session's turns tell it (``completed_at`` on the turn that asked), whatever cancellation
revision was seen; a revision moved since the card was posted, or a cancel under way, tells it
sooner. An answer ends the turn too, once the request has left the list: then it is not an
orphan, and its card ends as the transcript says."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from kandev_slack.core.approval import approval_key
from kandev_slack.core.domain import Card
from kandev_slack.kandev.approvals.wire import PermissionRequest, SessionCancellation
from kandev_slack.kandev.errors import KandevAgentStarting, KandevNotFoundError
from kandev_slack.usecases.leases import SUBMISSION_LEASE_S


class TurnsKandev(Protocol):
    """The calls it makes (kandev_slack.kandev.approvals.client.PermissionsClient)."""

    def list_pending(
        self, task_id: str, session_id: str | None = None
    ) -> list[PermissionRequest]: ...

    def cancellation(self, session_id: str) -> SessionCancellation | None: ...

    def turn_ended(self, session_id: str, asked_at: datetime) -> bool | None: ...


class InFlight(Protocol):
    def submission_in_flight(
        self, pending_id: str, within_s: float, *, besides: str = ...
    ) -> bool: ...


def still_listed(kandev: TurnsKandev, task_id: str, session_id: str, key: str) -> bool:
    """Whether the request of card key ``key`` is in its session's live list now."""
    try:
        listed = kandev.list_pending(task_id, session_id)
    except (KandevAgentStarting, KandevNotFoundError):
        return False
    return key in {approval_key(r.request_id) for r in listed}


def turn_over(kandev: TurnsKandev, submissions: InFlight, card: Card) -> bool:
    """Whether ``card``'s request (listed when it was read) belongs to a turn that is over."""
    if submissions.submission_in_flight(card.pending_id, SUBMISSION_LEASE_S):
        return False  # a Slack click is resolving it: the answer pipeline ends it
    approval = card.approval
    now = kandev.cancellation(card.session_id)
    if now is None:
        return False  # the session is gone: its request leaves the list, ended there
    revision = approval.cancellation_revision
    if now.pending or (revision is not None and now.revision != revision):
        return True
    if not kandev.turn_ended(card.session_id, approval.created_at):
        return False
    return still_listed(kandev, card.task_id, card.session_id, card.pending_id)
