"""The prompt a reply in a card's thread gets: "Send “…” as your answer to <question>?" with
Send / Cancel (an ephemeral message; the buttons carry only the kept reply's id)."""

from __future__ import annotations

from typing import Any

from kandev_slack.cards import ids, words
from kandev_slack.cards.limits import KANDEV_MAX_TEXT as MAX_TEXT
from kandev_slack.cards.text import fit_escaped, one_line


def reply_offer(
    reply_id: str, text: str, title: str, prompt: str, *, as_option: bool, note: str = ""
) -> tuple[str, list[dict[str, Any]]]:
    """(fallback text, blocks) of the prompt; ``note``: said above it (why it is offered
    again, safe mrkdwn)."""
    message = reply_offer_message(text, title, prompt)
    noted: list[dict[str, Any]] = (
        [{"type": "section", "text": {"type": "mrkdwn", "text": note}}] if note else []
    )
    blocks: list[dict[str, Any]] = [
        *noted,
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
    return (f"{note} {message}" if note else message), blocks


# ---- the words --------------------------------------------------

#: The quoted reply in the Send prompt: at most this many characters are shown.
MAX_REPLY_SHOWN = 300


def _quoted_reply(text: str) -> str:
    return "“" + fit_escaped(one_line(text), MAX_REPLY_SHOWN)[0] + "”"


def _question_named(title: str, prompt: str) -> str:
    return "*" + fit_escaped(one_line(title or prompt), 150)[0] + "*"


def reply_offer_message(text: str, title: str, prompt: str) -> str:
    """The prompt a reply in a card's thread gets (only its author sees it)."""
    if not (one_line(title) or one_line(prompt)):
        return f"Send {_quoted_reply(text)} as your answer?"
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


def reply_edited_note() -> str:
    return "You edited your reply: *Send* now sends it as it reads now."


def reply_deleted_message() -> str:
    return "Your reply was deleted, so nothing was sent."


def reply_not_text_message(kind: str) -> str:
    what = "a file" if kind == "file" else "a /me message"
    return (
        f"Your reply was not offered as an answer: it is {what}, and the agent takes text "
        "only. To answer, reply in this thread with an option's number or name, or your answer "
        "in words; or use the card's buttons."
    )


def dm_help_message() -> str:
    return (
        "I don't read direct messages, so nothing you write here reaches an agent. To see the "
        "questions waiting for you, use */kandev-questions* in any channel or open my *Home* "
        "tab; to answer one, use its card's buttons or reply in the card's thread."
    )


def reply_not_now_message() -> str:
    return (
        "Your reply could not be looked at right now (the bot cannot read its database), so "
        "nothing was sent. Please reply again in a moment, or use the card's buttons."
    )


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
