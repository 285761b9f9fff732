"""How a card's messages read, whichever kind and wherever they are (pure but for the
snooze lookup the caller hands in): the channel card, its other messages — escalation and DM
cards, with their note; a person's DM card with "Snooze…", or collapsed while they snoozed it
— and the plain form sent when a card cannot be rendered or Slack refuses it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from kandev_slack.cards.limits import MAX_MESSAGE_TEXT
from kandev_slack.cards.parts.copy import in_grey_line, with_note
from kandev_slack.cards.parts.plain import plain_card
from kandev_slack.cards.text import shorten_mrkdwn
from kandev_slack.config.routing import USER_ID
from kandev_slack.core.domain import Card, CardState
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.core.snooze import Snooze
from kandev_slack.kinds.registry import spec_of
from kandev_slack.slack_api.gateway import Message
from kandev_slack.store.cards.copies import Copy
from kandev_slack.surfaces.followups import escalation_text
from kandev_slack.surfaces.kinds import channel_card, renderer_of
from kandev_slack.surfaces.snooze import snoozed_card, with_snooze_select


class SnoozeLookup(Protocol):
    """Whether a person snoozed an item (kandev_slack.store.SnoozesRepository)."""

    def active_snooze(self, user_id: str, pending_id: str) -> Snooze | None: ...


def copy_message(
    card: Card,
    note: str,
    kandev_url: str,
    copy: Copy | None = None,
    snooze: Snooze | None = None,
) -> Message:
    """One of the card's other messages: the card with its note above it; an escalation
        card's notification text starts with "🔺 Escalated"; a DM card says why it came in its grey
    line (no header above it).
        One in a person's DM, while the question waits: "Snooze…" in its quiet row, or, while they
        snoozed it (``snooze``), one line saying until when, with Unsnooze."""
    in_dm = copy is not None and bool(USER_ID.match(copy.target))
    waiting = card.state is CardState.PENDING and spec_of(card).snoozable
    if in_dm and waiting and snooze is not None:
        collapsed = snoozed_card(card.task, snooze, kandev_url=kandev_url)
        return Message(text=collapsed["text"], blocks=collapsed["blocks"])
    message = card_message(card, kandev_url, reader=copy.target if in_dm and copy else None)
    if in_dm and waiting:
        message = Message(
            text=message.text, blocks=with_snooze_select(message.blocks, card.pending_id)
        )
    text = message.text
    if copy is not None and copy.kind == "escalation" and card.state is CardState.PENDING:
        text = shorten_mrkdwn(escalation_text() + text, MAX_MESSAGE_TEXT, note="…")[0]
    if (
        copy is not None and copy.kind == "dm"
    ):  # no extra header on a DM card: why it came is said in its grey line
        rendered = in_grey_line({"text": text, "blocks": message.blocks}, note)
        return Message(text=rendered["text"], blocks=rendered["blocks"])
    rendered = with_note({"text": text, "blocks": message.blocks}, note)
    return Message(text=rendered["text"], blocks=rendered["blocks"])


def card_message(
    card: Card,
    kandev_url: str,
    now: datetime | None = None,
    *,
    in_thread: tuple[Sequence[AlsoAsked], int] | None = None,
    reader: str | None = None,
) -> Message:
    """The card of ``card``'s item, whichever kind (a bundle's, or an approval's);
    ``in_thread``: given for its channel card (None: another of its messages): on a first
    card, the identical items waiting in its thread (the first few, how many), counted on its
    line; a card posted in such a thread is headed "Also from <its task>"
    (kandev_slack/usecases/groups.py); ``reader``: the one person who sees it (a DM card's
    recipient)."""
    at = now or datetime.now(UTC)
    if in_thread is None:
        rendered = renderer_of(card).render_message(card, kandev_url, at, (), reader)
    else:
        rendered = channel_card(card, kandev_url, at, in_thread)
    return Message(text=rendered["text"], blocks=rendered["blocks"])


def plain_message(card: Card, kandev_url: str) -> Message:
    """The card's plain form (see kandev_slack/cards/parts/plain.py)."""
    rendered = plain_card(
        card.pending_id, card.task_id or card.item.task_id, card.state, kandev_url=kandev_url
    )
    return Message(text=rendered["text"], blocks=rendered["blocks"])
