"""Sending one person's attempt to Kandev, whichever kind of item its card is: a bundle's
answer or rejection (Kandev's clarification calls), or an approval's option
(``resolve_agent_permission_kandev``, never re-sent blindly: an ambiguous one is settled from
the transcript). Both give the answer pipeline's outcomes (kandev_slack/kandev/models.py), so the
answer service and crash recovery apply them alike."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from kandev_slack.core.approval import Approval
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card
from kandev_slack.kandev.models import Outcome
from kandev_slack.usecases.answering.verdicts import Attempt


class ApprovalCalls(Protocol):
    """The approval calls (kandev_slack.kandev.approvals.client.PermissionsClient)."""

    def approve(
        self, approval: Approval, option_id: str, *, first_sent: datetime, resend: bool = False
    ) -> Outcome: ...

    def read_back(
        self, approval: Approval, option_id: str, *, first_sent: datetime
    ) -> Outcome | None: ...


class ResolvingKandev(Protocol):
    """What sending an attempt calls on Kandev (kandev_slack.kandev.client.KandevClient)."""

    @property
    def permissions(self) -> ApprovalCalls: ...

    def answer(
        self,
        pending_id: str,
        answers: list[Answer],
        *,
        resend: bool = False,
        first_sent: datetime | None = None,
    ) -> Outcome: ...

    def reject(
        self,
        pending_id: str,
        reason: str = "",
        *,
        resend: bool = False,
        first_sent: datetime | None = None,
    ) -> Outcome: ...

    def recorded(
        self,
        task_id: str,
        pending_id: str,
        *,
        answers: list[Answer] | None = None,
        reason: str = "",
        session_id: str | None = None,
        first_sent: datetime | None = None,
    ) -> Outcome | None: ...


def chosen_option(attempt: Attempt) -> str:
    """The option an approval attempt chose ("" when it names none)."""
    for answer in attempt.answers:
        if answer.selected_options:
            return answer.selected_options[0]
    return ""


def send(
    kandev: ResolvingKandev,
    card: Card,
    attempt: Attempt,
    *,
    first_sent: datetime,
    resend: bool = False,
) -> Outcome:
    """Send ``attempt`` for ``card``'s item. ``resend``: an earlier attempt of exactly this
    may have reached Kandev (crash recovery), decided against ``first_sent``."""
    if isinstance(card.item, Approval):
        option_id = chosen_option(attempt)
        return kandev.permissions.approve(
            card.item, option_id, first_sent=first_sent, resend=resend
        )
    if attempt.action == "reject":
        return kandev.reject(
            attempt.pending_id, attempt.reason, resend=resend, first_sent=first_sent
        )
    return kandev.answer(
        attempt.pending_id, list(attempt.answers), resend=resend, first_sent=first_sent
    )


def read_back(
    kandev: ResolvingKandev, card: Card, attempt: Attempt, *, first_sent: datetime
) -> Outcome | None:
    """What Kandev recorded for ``attempt``'s item, sending nothing (None: it does not tell)."""
    if isinstance(card.item, Approval):
        return kandev.permissions.read_back(
            card.item, chosen_option(attempt), first_sent=first_sent
        )
    return kandev.recorded(
        card.task_id,
        card.pending_id,
        answers=None if attempt.action == "reject" else list(attempt.answers),
        reason=attempt.reason,
        session_id=card.session_id or None,
        first_sent=first_sent,
    )
