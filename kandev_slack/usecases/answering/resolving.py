"""Sending one person's attempt to Kandev, whichever kind of item its card is: a bundle's
answer or rejection (Kandev's clarification calls), or an approval's option
(``resolve_agent_permission_kandev``, never re-sent blindly: an ambiguous one is settled from
the transcript). Both give the answer pipeline's outcomes (kandev_slack/kandev/models.py), so the
answer service and crash recovery apply them alike."""

from __future__ import annotations

from datetime import datetime

from kandev_slack.core.domain import Card
from kandev_slack.kandev.models import Outcome
from kandev_slack.kinds.registry import spec_of
from kandev_slack.kinds.spec import Resolver, Try
from kandev_slack.usecases.answering.verdicts import Attempt

#: What sending an attempt calls on Kandev (kandev_slack.kandev.client.KandevClient): each kind
#: uses its part (kandev_slack/kinds/<kind>/spec.py).
ResolvingKandev = Resolver[Outcome]


def tried(attempt: Attempt) -> Try:
    """``attempt`` as the kinds' operations read it."""
    return Try(attempt.pending_id, attempt.action, attempt.answers, attempt.reason)


def send(
    kandev: ResolvingKandev,
    card: Card,
    attempt: Attempt,
    *,
    first_sent: datetime,
    resend: bool = False,
) -> Outcome:
    """Send ``attempt`` for ``card``'s item (its kind's resolution call). ``resend``: an
    earlier attempt of exactly this may have reached Kandev (crash recovery), decided against
    ``first_sent``."""
    return spec_of(card).send(kandev, card, tried(attempt), first_sent=first_sent, resend=resend)


def read_back(
    kandev: ResolvingKandev, card: Card, attempt: Attempt, *, first_sent: datetime
) -> Outcome | None:
    """What Kandev recorded for ``attempt``'s item, sending nothing (None: it does not tell)."""
    return spec_of(card).read_back(kandev, card, tried(attempt), first_sent=first_sent)
