"""What every card kind shares (pure): its head — the title, then the grey line while it waits
or, once resolved, the outcome line in bold first — and its secondary actions, one row of quiet
buttons ("I'm on it", Skip, Reject…, Conversation, Open in Kandev) under the card's answer buttons.

Skip is the one-tap rejection Kandev's web UI has too. No button here is styled: the answer
buttons are what a card is for, and a danger-styled button belongs in the reject form, not on
a card a person skims.
"""

from __future__ import annotations

from datetime import datetime

from bot.cards import ids
from bot.cards.blocks import Block, actions, button, context, section
from bot.cards.claims import claim_block, claim_buttons
from bot.cards.ids import ButtonValue
from bot.cards.mrkdwn import link
from bot.cards.wording import slack_date
from bot.core.claims import Claim

#: The block id of the secondary row.
BLOCK_MORE = ids.BLOCK_MORE


def card_head(
    url: str,
    title: str,
    *,
    meta: str,
    outcome: str | None,
    at: datetime | None = None,
    claim: Claim | None = None,
) -> list[Block]:
    """The title (linked to Kandev), then ``meta`` (the grey line) and who is on it
    (``claim``) while waiting, or the ``outcome`` line in bold with its date (``at``) once
    resolved: outcome first."""
    head: list[Block] = [section(f"*{link(url, title)}*", block_id=ids.BLOCK_TITLE)]
    if outcome is None:
        head.append(context(meta, block_id=ids.BLOCK_META))
        if claim is not None:
            head.append(claim_block(claim))
    else:
        when = f" · {slack_date(at)}" if at is not None else ""
        head.append(section(f"*{outcome}*{when}", block_id=ids.BLOCK_OUTCOME))
    return head


def secondary_actions(
    url: str,
    *,
    pending_id: str | None = None,
    reject: bool = False,
    conversation: bool = False,
    claimable: bool = False,
    claim: Claim | None = None,
    block_id: str = BLOCK_MORE,
) -> Block:
    """The row: "I'm on it" (or "Take over" and "Release" when ``claim``: ``claimable``),
    "Skip" and "Reject…" (``reject``), "Conversation" (``conversation``) — when asked for, on
    a waiting item whose id fits a button value — then "Open in Kandev" (a link button,
    always). Skip rejects at once with Kandev's own reason; Reject… asks for one."""
    elements: list[Block] = []
    if pending_id and claimable:
        elements += claim_buttons(pending_id, claim)
    if pending_id and reject:
        value = ButtonValue(pending_id=pending_id).encode()
        elements.append(button("Skip", ids.ACTION_SKIP, value=value))
        elements.append(button("Reject…", ids.ACTION_REJECT, value=value))
    if pending_id and conversation:
        value = ButtonValue(pending_id=pending_id, conversation=True).encode()
        elements.append(button("Conversation", ids.ACTION_CONVERSATION, value=value))
    elements.append(button("Open in Kandev", ids.ACTION_OPEN, url=url))
    return actions(elements, block_id=block_id)
