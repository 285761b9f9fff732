"""What a reply in a card's thread says as an answer to its question (pure): an option, named
by its label (any case, trimmed) or its number, or free text (bot/usecases/thread_replies.py
keeps and offers it)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.clarification import Option, Question
from bot.core.limits import KANDEV_MAX_TEXT


@dataclass(frozen=True)
class AsOption:
    """The reply names an option: its label (any case, trimmed) or its number (``2``)."""

    option: Option


@dataclass(frozen=True)
class AsText:
    """Anything else: the reply as free text (trimmed)."""

    text: str


@dataclass(frozen=True)
class TooLong:
    """Free text longer than Kandev takes (code points)."""

    length: int


Match = AsOption | AsText | TooLong


def reply_text(raw: str) -> str:
    """The reply, trimmed (the edge turned Slack's markup into what the person typed:
    bot/slack/markup.py)."""
    return raw.strip()


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def match_reply(question: Question, raw: str) -> Match | None:
    """What a reply says as an answer to ``question`` (None: nothing, an empty reply)."""
    text = reply_text(raw)
    if not text:
        return None
    folded = _folded(text)
    for option in question.options:
        if _folded(option.label) == folded:
            return AsOption(option)
    if text.isascii() and text.isdigit():
        number = int(text)
        if 1 <= number <= len(question.options):
            return AsOption(question.options[number - 1])
    if len(text) > KANDEV_MAX_TEXT:
        return TooLong(len(text))
    return AsText(text)


def looks_like_an_answer(question: Question, raw: str) -> bool:
    """Whether a reply is an option's number or label (someone seems to be answering)."""
    return isinstance(match_reply(question, raw), AsOption)
