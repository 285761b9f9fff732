"""A question bundle as Slack shows it (pure): its card, its question fields and its forms.

The functions the cards layer calls (kandev_slack/cards/kinds.py, ``KindCards``) are here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kandev_slack.cards import wording
from kandev_slack.core.domain import Card, CardOutcome
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.kinds.question.cards.card import render_card


def render_message(
    card: Card, kandev_url: str, now: datetime, also_asked: Sequence[AlsoAsked], reader: str | None
) -> dict[str, Any]:
    return render_card(
        card.bundle,
        card.task,
        card.state,
        card.outcome,
        kandev_url=kandev_url,
        now=now,
        past=card.past,
        claim=card.claim,
        also_asked=also_asked,
        reader=reader,
    )


def outcome_line(card: Card, outcome: CardOutcome) -> str:
    return wording.outcome_line(outcome, card.bundle)
