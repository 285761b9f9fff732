"""Which renderer draws a card of each kind: the rendering half of a kind's spec
(kandev_slack/kinds/registry.py). The kinds' specs stand below the use-cases and cannot import
the cards, so the renderers are chosen here, one entry per :class:`ItemKind`
(tests/unit/kinds/test_registry.py checks every kind has one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kandev_slack.cards.wording import outcome_line
from kandev_slack.core.domain import Card, CardOutcome
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.core.pending import ItemKind
from kandev_slack.kinds.approval.cards.card import approval_outcome_line, render_approval
from kandev_slack.kinds.question.cards.card import render_card


@dataclass(frozen=True)
class CardRenderer:
    #: The card (``kandev_url``, ``now``, ``also_asked``, ``reader``) as a message.
    card: Callable[[Card, str, datetime, Sequence[AlsoAsked], str | None], dict[str, Any]]
    #: The one line saying how it ended (the Home's "Recently resolved").
    outcome_line: Callable[[Card, CardOutcome], str]


def _question(
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


def _approval(
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


RENDERERS: Mapping[ItemKind, CardRenderer] = {
    ItemKind.QUESTION: CardRenderer(_question, lambda c, o: outcome_line(o, c.bundle)),
    ItemKind.APPROVAL: CardRenderer(_approval, lambda c, o: approval_outcome_line(o, c.approval)),
}


def renderer_of(card: Card) -> CardRenderer:
    """The renderer of ``card``'s kind (KeyError naming it for a kind with none: a bug)."""
    return RENDERERS[card.kind]
