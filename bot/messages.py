"""The words the bot says to one person (ephemeral messages, modal errors). Pure.

The messages about a bundle's outcome live with the card wording (bot/cards/wording.py, so the
card and the person are told the same thing) and are re-exported here; this module adds the
ones about the interaction itself (where, who, what was wrong with it).
"""

from __future__ import annotations

from bot.cards.limits import KANDEV_MAX_TEXT as MAX_TEXT
from bot.cards.wording import (
    Action,
    already_answered_message,
    ended_message,
    invalid_message,
    lost_message,
    not_a_card_message,
    not_recorded_message,
    unavailable_message,
)
from bot.domain import CardOutcome, CardState
from bot.kandev.models import Bundle

__all__ = [
    "MAX_TEXT",
    "already_answered_message",
    "ended_message",
    "forbidden_message",
    "invalid_message",
    "lost_message",
    "not_a_card_message",
    "not_recorded_message",
    "resolved_already_message",
    "tampered_message",
    "too_long_message",
    "unavailable_message",
    "unknown_bundle_message",
    "wrong_channel_message",
]


def resolved_already_message(
    bundle: Bundle, outcome: CardOutcome, *, action: Action = "answer"
) -> str:
    """For a click on a card the bot already knows is resolved: the same words as if Kandev had
    been asked (the winner and their choice, or that the question ended / is unavailable)."""
    if outcome.state in (CardState.ANSWERED, CardState.REJECTED):
        return lost_message(bundle, outcome, action=action)
    if outcome.state is CardState.UNAVAILABLE:
        return unavailable_message()
    return ended_message()


def too_long_message(length: int) -> str:
    return f"Your text is {length:,} characters; Kandev accepts at most {MAX_TEXT:,}."


def forbidden_message() -> str:
    return (
        "You are not on the list of people who may answer this agent's questions. "
        "Ask someone on the team that owns this workspace."
    )


def wrong_channel_message(channel: str) -> str:
    return f"This question can only be answered from its card in <#{channel}>."


def unknown_bundle_message() -> str:
    return (
        "This message is not an open agent question the bot knows about "
        "(it may have been answered and cleaned up)."
    )


def tampered_message() -> str:
    return "That button or form was not made by this app for this question; nothing was sent."
