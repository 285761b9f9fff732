"""A kind's renderers, found from its one registry entry (kandev_slack/kinds/registry.py): by
convention they are the ``cards`` sub-package of the package its spec lives in
(``kandev_slack.kinds.<kind>.cards``, beside ``kandev_slack.kinds.<kind>.spec``), exposing the
functions of :class:`KindCards`. No second table: adding a kind adds its package (spec.py and
cards/) and ONE registry line. tests/unit/kinds/test_registry.py walks the registry and checks
every kind's cards module exists and exposes :data:`CALLED`, so a kind missing its renderers
fails the tests, never production.

The kinds' specs stand below the use-cases and cannot import the cards; the cards find a kind's
renderers here, on demand (imported once, then cached)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from types import ModuleType
from typing import Any, Protocol, cast

from kandev_slack.cards.parts.groups import also_from_line, thread_line, with_lines
from kandev_slack.core.domain import Card, CardOutcome
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.kinds.registry import spec_of
from kandev_slack.kinds.spec import KindSpec


class KindCards(Protocol):
    """What the cards layer calls in a kind's cards module."""

    def render_message(
        self,
        card: Card,
        kandev_url: str,
        now: datetime,
        also_asked: Sequence[AlsoAsked],
        reader: str | None,
    ) -> dict[str, Any]:
        """The card (``kandev_url``, ``now``, ``also_asked``, ``reader``) as a message."""
        ...

    def outcome_line(self, card: Card, outcome: CardOutcome) -> str:
        """The one line saying how it ended (the Home's "Recently resolved")."""
        ...


#: The functions every kind's cards module exposes (the members of :class:`KindCards`).
CALLED: tuple[str, ...] = ("render_message", "outcome_line")


def cards_module_name(spec: KindSpec) -> str:
    """``kandev_slack.kinds.<kind>.cards``: the ``cards`` beside the module of ``spec``'s
    class."""
    return f"{type(spec).__module__.rpartition('.')[0]}.cards"


@cache
def _load(name: str) -> ModuleType:
    return importlib.import_module(name)


def cards_of_spec(spec: KindSpec) -> KindCards:
    """The renderers of ``spec``'s kind (ModuleNotFoundError naming the module for a kind
    with none: a bug the registry test catches)."""
    return cast(KindCards, _load(cards_module_name(spec)))


def renderer_of(card: Card) -> KindCards:
    """The renderers of ``card``'s kind (UnknownKindError for a kind this release does not
    know)."""
    return cards_of_spec(spec_of(card))


def card_outcome_line(card: Card, outcome: CardOutcome) -> str:
    """The outcome line of any card, whichever kind (the Home's "Recently resolved")."""
    return renderer_of(card).outcome_line(card, outcome)


def channel_card(
    card: Card,
    kandev_url: str,
    now: datetime,
    in_thread: tuple[Sequence[AlsoAsked], int] = ((), 0),
) -> dict[str, Any]:
    """``card``'s channel card, whichever kind, with what identical items add (issue 33): a
    card posted in the thread of an identical one is headed "Also from <its task>"; a first
    card counts those waiting in its thread (``in_thread``: the first few, how many)."""
    rendered = renderer_of(card).render_message(card, kandev_url, now, (), None)
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
