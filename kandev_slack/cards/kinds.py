"""Which renderer draws a card of each kind: the rendering half of a kind's spec
(kandev_slack/kinds/registry.py). The kinds' specs stand below the use-cases and cannot import
the cards, so the renderers are chosen here, one entry per :class:`ItemKind`
(tests/unit/kinds/test_registry.py checks every kind has one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kandev_slack.cards.approval.card import approval_outcome_line, render_approval
from kandev_slack.cards.question.card import render_card
from kandev_slack.cards.views.groups import also_from_line, thread_line, with_lines
from kandev_slack.cards.wording import outcome_line
from kandev_slack.core.domain import Card, CardOutcome
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.core.pending import ItemKind


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


def channel_card(
    card: Card,
    kandev_url: str,
    now: datetime,
    in_thread: tuple[Sequence[AlsoAsked], int] = ((), 0),
) -> dict[str, Any]:
    """``card``'s channel card, whichever kind, with what identical items add (issue 33): a
    card posted in the thread of an identical one is headed "Also from <its task>"; a first
    card counts those waiting in its thread (``in_thread``: the first few, how many)."""
    rendered = renderer_of(card).card(card, kandev_url, now, (), None)
    first = ""
    if card.thread_of is not None:
        own = AlsoAsked(
            pending_id=card.pending_id,
            task_id=card.task_id or card.task.task_id,
            title=card.task.title,
        )
        first = also_from_line(own, kandev_url=kandev_url)
    shown, count = in_thread
    last = thread_line(shown, count, kandev_url=kandev_url)
    return with_lines(rendered, first=first, last=last)
