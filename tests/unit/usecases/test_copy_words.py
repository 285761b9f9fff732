"""A card's other messages (escalation card, DM card): an escalation's notification says so
first; no age is written into either ("waiting 10 min" would never change: the grey line's
date token is what Slack shows live); a DM card carries no header above it."""

from __future__ import annotations

import re
from datetime import timedelta

from kandev_slack.store.cards.copies import Copy
from kandev_slack.usecases.outbox.messages import copy_message
from tests.kit.factories import KANDEV_URL, make_card


def _copy(kind: str, waited: timedelta, note: str) -> tuple:
    card = make_card()
    copy = Copy(
        key="k",
        pending_id=card.pending_id,
        kind=kind,
        target="C0LEADS",
        note=note,
        created_at=card.created_at + waited,
    )
    return card, copy


def test_an_escalation_cards_notification_says_so_first_without_a_frozen_age() -> None:
    card, copy = _copy("escalation", timedelta(hours=1), "🔺 *Escalated* · …")
    message = copy_message(card, copy.note, KANDEV_URL, copy)
    assert message.text.startswith("🔺 Escalated · Which database should we use?")
    assert message.blocks[0]["text"]["text"] == "🔺 *Escalated* · …"
    assert not re.search(r"\bwaiting \d|\d+ (min|h)\b", str(message))


def test_a_dm_card_has_no_header_and_says_why_it_came_in_its_grey_line() -> None:
    card, copy = _copy("dm", timedelta(minutes=3), "🔔 Platform (you subscribed)")
    message = copy_message(card, copy.note, KANDEV_URL, copy)
    assert message.blocks[0]["block_id"] == "kq_title"
    meta = next(b for b in message.blocks if b.get("block_id") == "kq_meta")
    assert meta["elements"][0]["text"].startswith("🔔 Platform (you subscribed) · ")
    assert "waiting" not in str(message.blocks)
    assert not message.text.startswith("🔺")


def test_a_dm_card_offers_its_recipient_release_of_their_own_claim() -> None:
    from kandev_slack.core.claims import Claim

    card, copy = _copy("dm", timedelta(minutes=3), "🔔 Platform (you subscribed)")
    copy = copy.model_copy(update={"target": "U0ANA"})
    claim = Claim(
        user_id="U0ANA", since=card.created_at, until=card.created_at + timedelta(hours=1)
    )
    message = copy_message(card.model_copy(update={"claim": claim}), copy.note, KANDEV_URL, copy)
    labels = re.findall(r"'text': '([^']*)'", str(message.blocks))
    assert "Release" in labels and "👀 Take over" not in labels
