"""A card's other messages (an escalation card, a subscriber's DM card): the same card, with
a note above it (pure)."""

from __future__ import annotations

from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import context, section
from kandev_slack.cards.limits import MAX_CONTEXT_TEXT
from kandev_slack.cards.text import shorten_mrkdwn

Rendered = dict[str, Any]


def with_note(rendered: Rendered, note: str) -> Rendered:
    """``rendered`` (a card's ``text`` and ``blocks``) with ``note`` (mrkdwn made by the bot)
    as its first block; without a note, the card as it is. A card too big for the extra
    block is refused by Slack and sent in its plain form, like any card."""
    if not note:
        return rendered
    return {"text": rendered["text"], "blocks": [section(note), *rendered["blocks"]]}


def in_grey_line(rendered: Rendered, note: str) -> Rendered:
    """``rendered`` with ``note`` leading its grey line (a DM card: no header above it); a
    card without a grey line (resolved) has the note as a grey line at its end."""
    if not note:
        return rendered
    blocks = []
    placed = False
    for block in rendered["blocks"]:
        if not placed and block.get("block_id") == ids.BLOCK_META and block.get("elements"):
            first, *rest = block["elements"]
            joined = shorten_mrkdwn(f"{note} · {first['text']}", MAX_CONTEXT_TEXT, note="…")[0]
            block = {**block, "elements": [{**first, "text": joined}, *rest]}
            placed = True
        blocks.append(block)
    if not placed:
        blocks.append(context(note, block_id="kq_note"))
    return {"text": rendered["text"], "blocks": blocks}
