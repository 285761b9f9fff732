"""What every card kind shares (pure): its head — the title, then the grey line while it waits
or, once resolved, the outcome line in bold first — and its secondary actions: on a waiting card
one quiet "More" overflow ("I'm on it" / "Take over" / "Release", Skip…, Reject…, Conversation)
beside the card's answer buttons, and "Open in Kandev" a link in the grey line; once resolved,
only the "Open in Kandev" button.

The answer buttons are what a card is for: at most two other controls stand beside them (the
overflow and, on a DM card, "Snooze…"). Skip (the one-tap rejection Kandev's web UI has too)
asks to confirm first (``skip_confirm``). No button here is styled: a danger-styled button
belongs in the reject form or the confirm, not on a card a person skims.
"""

from __future__ import annotations

from datetime import datetime

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, actions, button, context, plain, section
from kandev_slack.cards.ids import ButtonValue, CodecError, MoreChoice, MoreValue, SkipConfirmValue
from kandev_slack.cards.limits import MAX_OPTION_TEXT
from kandev_slack.cards.mrkdwn import link
from kandev_slack.cards.parts.claims import claim_block, claim_buttons
from kandev_slack.cards.wording import slack_date
from kandev_slack.core.claims import Claim

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
    urgency: str = "",
) -> list[Block]:
    """The title (linked to Kandev), then ``meta`` (the grey line) and who is on it
    (``claim``) while waiting, or the ``outcome`` line in bold with its date (``at``) once
    resolved: outcome first. ``urgency`` (``🔴 Critical · ``) starts a waiting card's title:
    a critical item says so first, not only in the grey line."""
    first = urgency if outcome is None else ""
    head: list[Block] = [section(f"*{first}{link(url, title)}*", block_id=ids.BLOCK_TITLE)]
    if outcome is None:
        opened = link(url, OPEN_IN_KANDEV)
        head.append(context(f"{meta} · {opened}" if meta else opened, block_id=ids.BLOCK_META))
        if claim is not None:
            head.append(claim_block(claim))
    else:
        when = f" · {slack_date(at)}" if at is not None else ""
        head.append(section(f"*{outcome}*{when}", block_id=ids.BLOCK_OUTCOME))
    return head


#: The label of the link (and, once resolved, the button) to the task in Kandev.
OPEN_IN_KANDEV = "Open in Kandev"
#: The overflow's options, in order (Slack allows at most 5 in one overflow).
MORE_LABELS: dict[MoreChoice, str] = {
    "claim": "👀 I'm on it",
    "release": "Release",
    "skip": "Skip…",
    "reject": "Reject…",
    "conversation": "Conversation",
}
TAKE_OVER = "👀 Take over"
_MIN_OVERFLOW, _MAX_OVERFLOW = 2, 5


def _more_choices(
    *, reject: bool, conversation: bool, claimable: bool, claim: Claim | None, holder: str | None
) -> list[tuple[MoreChoice, str]]:
    """The overflow's options: who may be on it (nobody: "I'm on it"; someone: "Take over"
    and "Release", or only the one that fits when the card's one reader is known —
    ``holder``: the DM card's recipient), Skip… and Reject…, Conversation."""
    chosen: list[tuple[MoreChoice, str]] = []
    if claimable:
        if claim is None:
            chosen.append(("claim", MORE_LABELS["claim"]))
        else:
            mine = holder is not None and holder == claim.user_id
            if holder is None or not mine:
                chosen.append(("claim", TAKE_OVER))
            if holder is None or mine:
                chosen.append(("release", MORE_LABELS["release"]))
    if reject:
        chosen += [("skip", MORE_LABELS["skip"]), ("reject", MORE_LABELS["reject"])]
    if conversation:
        chosen.append(("conversation", MORE_LABELS["conversation"]))
    return chosen


def more_overflow(pending_id: str, choices: list[tuple[MoreChoice, str]]) -> Block | None:
    """The "More" overflow of ``choices``; None when it cannot be offered (fewer than 2 or
    more than 5 options, or an item id too long for an option's value)."""
    if not _MIN_OVERFLOW <= len(choices) <= _MAX_OVERFLOW:
        return None
    try:
        options = [
            {
                "text": plain(label, MAX_OPTION_TEXT),
                "value": MoreValue(choice=choice, pending_id=pending_id).encode(),
            }
            for choice, label in choices
        ]
    except CodecError:
        return None
    return {"type": "overflow", "action_id": ids.ACTION_MORE, "options": options}


def secondary_actions(
    url: str,
    *,
    pending_id: str | None = None,
    reject: bool = False,
    conversation: bool = False,
    claimable: bool = False,
    claim: Claim | None = None,
    block_id: str = BLOCK_MORE,
    reader: str | None = None,
) -> Block:
    """The quiet row. On a waiting item (``pending_id`` and any of ``reject``,
    ``conversation``, ``claimable``): the "More" overflow (see :func:`_more_choices`;
    ``reader``: the one person who sees the card, a DM card's recipient, if known), "Open in
    Kandev" being a link in the grey line. When no overflow can be offered (one option only,
    or an id too long for an option's value), or once resolved: buttons — "I'm on it" (or
    "Take over" and "Release"), "Skip" and "Reject…", "Conversation" as asked, then "Open in
    Kandev" (a link button, always)."""
    choices = _more_choices(
        reject=reject, conversation=conversation, claimable=claimable, claim=claim, holder=reader
    )
    overflow = more_overflow(pending_id, choices) if pending_id else None
    if overflow is not None:
        return actions([overflow], block_id=block_id)
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
    elements.append(button(OPEN_IN_KANDEV, ids.ACTION_OPEN, url=url))
    return actions(elements, block_id=block_id)


def skip_confirm(pending_id: str, channel: str, ts: str) -> tuple[str, list[Block]]:
    """The confirm of Skip… (an ephemeral message to the person who chose it): "Skip it"
    rejects the item with Kandev's own Skip reason, "Keep" leaves it waiting."""
    value = SkipConfirmValue(pending_id=pending_id, channel=channel, ts=ts).encode()
    text = "Skip this one? The agent is told it was skipped, without a reason."
    row = [
        button("Skip it", ids.ACTION_SKIP_CONFIRM, value=value, style="danger"),
        button("Keep", ids.ACTION_SKIP_KEEP, value=value),
    ]
    return text, [section(text, block_id="kq_skip_ask"), actions(row, block_id="kq_skip_row")]
