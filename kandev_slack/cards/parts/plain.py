"""The plain form of a card: what is posted when the full card cannot be rendered or Slack
refuses it (an id too long for a button, content beyond Block Kit's limits, ``invalid_blocks``).

It shows nothing the agent wrote, only fixed wording, a link to the task in Kandev and, while the
question waits and its id fits a button, the card's **Answer…** and **Reject…** buttons (which
work like the full card's). Always within Block Kit's limits. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, actions, button, context, section
from kandev_slack.cards.ids import ButtonValue, CodecError
from kandev_slack.cards.mrkdwn import is_safe_http_url, link
from kandev_slack.cards.parts.taskline import task_url
from kandev_slack.core.domain import CardState

CANNOT_SHOW = "This question cannot be shown here"
_ENDED_AS = {
    CardState.ANSWERED: "✅ Answered",
    CardState.REJECTED: "⛔ Rejected",
    CardState.ENDED: "⏹ Ended",
    CardState.UNAVAILABLE: "⚠️ No longer available",
}
_SHORTCUT_HINT = "To reject it here, use this message's ⋮ menu → *Reject agent question*."


def _kandev_link(kandev_url: str, task_id: str) -> str | None:
    try:
        return task_url(kandev_url, task_id)
    except ValueError:  # an id too long for a link: the Kandev home page at least
        return kandev_url if is_safe_http_url(kandev_url) else None


def plain_card(
    pending_id: str, task_id: str, state: CardState, *, kandev_url: str
) -> dict[str, Any]:
    """``{"text", "blocks"}`` for ``chat.postMessage`` / ``chat.update``."""
    url = _kandev_link(kandev_url, task_id)
    where = f"open it in Kandev: {link(url, 'Open in Kandev')}" if url else "open it in Kandev"
    headline = f"{CANNOT_SHOW} — {where}"
    if state.terminal:
        headline = f"{_ENDED_AS[state]} · {headline}"
    blocks: list[Block] = [section(headline, block_id=ids.BLOCK_TITLE)]
    elements: list[Block] = []
    if not state.terminal:
        try:
            value = ButtonValue(pending_id=pending_id).encode()
        except CodecError:
            blocks.append(context(_SHORTCUT_HINT, block_id=ids.BLOCK_NOTICE))
        else:
            elements.append(
                button("Answer…", ids.ACTION_ANSWER_MODAL, value=value, style="primary")
            )
            elements.append(button("Reject…", ids.ACTION_REJECT, value=value))
    if url:
        elements.append(button("Open in Kandev", ids.ACTION_OPEN, url=url))
    if elements:
        blocks.append(actions(elements, block_id=ids.BLOCK_ACTIONS))
    text = f"Agent question: {CANNOT_SHOW.lower()}; open it in Kandev"
    if state.terminal:
        text = f"{_ENDED_AS[state]} — {text}"
    return {"text": text, "blocks": blocks}
