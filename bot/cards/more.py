"""The secondary actions every card kind shares: one row of quiet buttons (Reject…,
Conversation, Open in Kandev) under the card's answer buttons (pure).

No button here is styled: the answer buttons are what a card is for, and a danger-styled
button belongs in the reject form, not on a card a person skims.
"""

from __future__ import annotations

from bot.cards import ids
from bot.cards.blocks import Block, actions, button
from bot.cards.ids import ButtonValue

#: The block id of the secondary row.
BLOCK_MORE = ids.BLOCK_MORE


def secondary_actions(
    url: str,
    *,
    pending_id: str | None = None,
    reject: bool = False,
    conversation: bool = False,
    block_id: str = BLOCK_MORE,
) -> Block:
    """The row: "Reject…" and "Conversation" (when asked for, on a waiting item whose id
    fits a button value), then "Open in Kandev" (a link button, always)."""
    elements: list[Block] = []
    if pending_id and reject:
        value = ButtonValue(pending_id=pending_id).encode()
        elements.append(button("Reject…", ids.ACTION_REJECT, value=value))
    if pending_id and conversation:
        value = ButtonValue(pending_id=pending_id, conversation=True).encode()
        elements.append(button("Conversation", ids.ACTION_CONVERSATION, value=value))
    elements.append(button("Open in Kandev", ids.ACTION_OPEN, url=url))
    return actions(elements, block_id=block_id)
