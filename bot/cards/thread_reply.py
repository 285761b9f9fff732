"""The prompt a reply in a card's thread gets: "Send “…” as your answer to <question>?" with
Send / Cancel (an ephemeral message; the buttons carry only the kept reply's id)."""

from __future__ import annotations

from typing import Any

from bot.cards import ids, words
from bot.cards.limits import KANDEV_MAX_TEXT as MAX_TEXT
from bot.cards.text import fit_escaped, one_line


def reply_offer(
    reply_id: str, text: str, title: str, prompt: str, *, as_option: bool
) -> tuple[str, list[dict[str, Any]]]:
    """(fallback text, blocks) of the prompt."""
    message = reply_offer_message(text, title, prompt)
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": message, "verbatim": True}},
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": reply_offer_hint(as_option)}],
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


# ---- the words --------------------------------------------------

#: The quoted reply in the Send prompt: at most this many characters are shown.
MAX_REPLY_SHOWN = 300


def _quoted_reply(text: str) -> str:
    return "“" + fit_escaped(one_line(text), MAX_REPLY_SHOWN)[0] + "”"


def _question_named(title: str, prompt: str) -> str:
    return "*" + fit_escaped(one_line(title or prompt), 150)[0] + "*"


def reply_offer_message(text: str, title: str, prompt: str) -> str:
    """The prompt a reply in a card's thread gets (only its author sees it)."""
    return f"Send {_quoted_reply(text)} as your answer to {_question_named(title, prompt)}?"


def reply_offer_hint(as_option: bool) -> str:
    if as_option:
        return "Your reply names one of the options; nothing is sent until you click Send."
    return "Sent as free text. Nothing is sent until you click Send."


def reply_sending_message(text: str) -> str:
    return f"Sending {_quoted_reply(text)}…"


def reply_kept_message() -> str:
    return "Your reply is kept: press *Send* on it again."


def reply_sent_message(text: str) -> str:
    return f"✅ Sent {_quoted_reply(text)} as your answer."


def reply_use_form_message() -> str:
    return (
        "This card has several questions, answered together: use *Answer…* on the card. "
        "Your reply was not sent."
    )


def reply_not_allowed_message(*, unverifiable: bool = False) -> str:
    if unverifiable:
        return "Your reply was not sent as an answer. " + words.unverifiable_message()
    return "Your reply was not sent as an answer: " + words.forbidden_message()


def reply_too_long_message(length: int) -> str:
    return (
        f"Your reply was not sent: an answer can be at most {MAX_TEXT:,} characters "
        f"(yours has {length:,}). Use *Other answer…* on the card, or reply with less."
    )


def reply_cancelled_message() -> str:
    return "Not sent."
