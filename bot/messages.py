"""The words the bot says to one person (ephemeral messages, modal errors). Pure."""

from __future__ import annotations

from typing import Literal

from bot import cards
from bot.domain import CardOutcome, CardState
from bot.kandev.models import Bundle

Action = Literal["answer", "reject"]

#: Kandev's limit for free text and reasons, in code points after stripping.
MAX_TEXT = 2000


def lost_message(bundle: Bundle, winner: CardOutcome, *, action: Action = "answer") -> str:
    """Someone else resolved it first: who (when known) with what; this person's was not sent."""
    return cards.lost_message(bundle, winner, action=action)


def already_answered_message(bundle: Bundle, outcome: CardOutcome) -> str:
    return cards.already_answered_message(bundle, outcome)


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


def ended_message() -> str:
    return (
        "The agent no longer needs this answer (the question was cancelled, expired or the "
        "agent moved on). Nothing was sent."
    )


def unavailable_message() -> str:
    return (
        "Kandev no longer shows this question to the bot (it may have been deleted, or the "
        "bot's Kandev token cannot see it). Nothing was sent."
    )


def not_recorded_message() -> str:
    return (
        "Your answer was *not* recorded: Kandev cannot be reached right now. "
        "The question is still open — please try again in a moment."
    )


def invalid_message(detail: str) -> str:
    return f"Kandev refused this answer: {detail}"


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


def not_a_card_message() -> str:
    return "“Reject agent question” only works on Kandev question cards posted by this app."


def tampered_message() -> str:
    return "That button or form was not made by this app for this question; nothing was sent."
