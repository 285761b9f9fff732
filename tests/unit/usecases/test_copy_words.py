"""A card's other messages (escalation card, DM card) say how long the question had waited
when they were sent, in words, and an escalation's notification says so first (issue 21)."""

from __future__ import annotations

from datetime import timedelta

from bot.store.copies import CardMessage
from bot.usecases.messages import copy_message
from tests.kit.factories import KANDEV_URL, make_card


def _copy(kind: str, waited: timedelta, note: str) -> tuple:
    card = make_card()
    copy = CardMessage(
        key="k",
        pending_id=card.pending_id,
        kind=kind,
        target="C0LEADS",
        note=note,
        created_at=card.created_at + waited,
    )
    return card, copy


def test_an_escalation_cards_notification_starts_with_how_long_it_waited() -> None:
    card, copy = _copy("escalation", timedelta(hours=1), "🔺 *Escalated — waiting 1 h* · …")
    message = copy_message(card, copy.note, KANDEV_URL, copy)
    assert message.text.startswith("🔺 Escalated — waiting 1 h · Which database should we use?")
    assert message.blocks[0]["text"]["text"] == "🔺 *Escalated — waiting 1 h* · …"


def test_a_dm_card_says_how_long_it_had_waited_when_sent() -> None:
    card, copy = _copy("dm", timedelta(minutes=3), "🔔 Platform (you subscribed)")
    message = copy_message(card, copy.note, KANDEV_URL, copy)
    assert message.blocks[0]["text"]["text"] == "🔔 Platform (you subscribed) · waiting 3 min"
    assert not message.text.startswith("🔺")
    fresh, at_once = _copy("dm", timedelta(seconds=5), "🔔 Platform (you subscribed)")
    note = copy_message(fresh, at_once.note, KANDEV_URL, at_once).blocks[0]["text"]["text"]
    assert note == "🔔 Platform (you subscribed)"  # posted at once: Slack's own time says it
