"""An approval as Slack shows it (pure): its card, its row, its whole text and view.

The functions the cards layer calls (kandev_slack/cards/kinds.py, ``KindCards``) are here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kandev_slack.core.domain import Card, CardOutcome
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.kinds.approval.cards.card import approval_outcome_line, render_approval


def render_message(
    card: Card, kandev_url: str, now: datetime, also_asked: Sequence[AlsoAsked], reader: str | None
) -> dict[str, Any]:
    return render_approval(
        card.approval,
        card.task,
        card.state,
        card.outcome,
        kandev_url=kandev_url,
        now=now,
        claim=card.claim,
    )


def outcome_line(card: Card, outcome: CardOutcome) -> str:
    return approval_outcome_line(outcome, card.approval)
