"""The prompt a reply in a card's thread gets: "Send “…” as your answer to <question>?" with
Send / Cancel (an ephemeral message; the buttons carry only the kept reply's id)."""

from __future__ import annotations

from typing import Any

from bot.cards import ids, words


def reply_offer(
    reply_id: str, text: str, title: str, prompt: str, *, as_option: bool
) -> tuple[str, list[dict[str, Any]]]:
    """(fallback text, blocks) of the prompt."""
    message = words.reply_offer_message(text, title, prompt)
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": message, "verbatim": True}},
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": words.reply_offer_hint(as_option)}],
        },
        {
            "type": "actions",
            "block_id": "kq_reply",
            "elements": [
                {
                    "type": "button",
                    "action_id": ids.ACTION_REPLY_SEND,
                    "text": {"type": "plain_text", "text": "Send"},
                    "style": "primary",
                    "value": reply_id,
                },
                {
                    "type": "button",
                    "action_id": ids.ACTION_REPLY_CANCEL,
                    "text": {"type": "plain_text", "text": "Cancel"},
                    "value": reply_id,
                },
            ],
        },
    ]
    return message, blocks
