"""A card's other messages (an escalation card, a subscriber's DM card): the same card, with
a note above it (pure)."""

from __future__ import annotations

from typing import Any

from bot.cards.blocks import section

Rendered = dict[str, Any]


def with_note(rendered: Rendered, note: str) -> Rendered:
    """``rendered`` (a card's ``text`` and ``blocks``) with ``note`` (mrkdwn made by the bot)
    as its first block; without a note, the card as it is. A card too big for the extra
    block is refused by Slack and sent in its plain form, like any card."""
    if not note:
        return rendered
    return {"text": rendered["text"], "blocks": [section(note), *rendered["blocks"]]}
