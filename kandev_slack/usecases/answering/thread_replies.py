"""Reply in a card's thread to answer (issue 22, point 1).

A person replies in the thread of a card message (the channel card, an escalation card, a DM
card: any message of a bundle the store knows by (channel, ts)). Nothing is sent by itself: on
a one-question card the reply is matched to an option (:func:`match_reply`) or taken as free
text, kept in the store (one row per reply message, so a redelivered event offers nothing
twice) and offered to its author, only them, with **Send** / **Cancel**. **Send** carries only
the kept reply's id; it goes through the one admission step and answer pipeline as a button
click does (kandev_slack/usecases/answering/interactions.py), audited with source
``slack:thread_reply``.

The use-case returns kinds (:data:`Received`); the words are the edge's
(kandev_slack/slack/presenters/tell.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from kandev_slack.core.clarification import Answer, Option, Question
from kandev_slack.core.domain import Card
from kandev_slack.core.limits import KANDEV_MAX_TEXT
from kandev_slack.kinds.registry import spec_of
from kandev_slack.store.cards.thread_replies import CANCELLED, DELETED, OFFERED, SENT
from kandev_slack.store.cards.thread_replies import ThreadReply as ThreadReply
from kandev_slack.store.errors import is_unavailable
from kandev_slack.usecases.answering.admission import Request
from kandev_slack.usecases.audit import Audit

log = logging.getLogger(__name__)

#: The audit's and the metrics' source of an answer sent from a thread reply.
SOURCE = "slack:thread_reply"
#: A reply can come within milliseconds of its card's post, before the card's message is
#: recorded (a script; a person replying to a card another replica is recording): under one of
#: the app's messages posted less than FRESH_PARENT_S ago, the card is waited for this long.
RECORD_WAIT_S = 2.0
FRESH_PARENT_S = 30.0


# ---- matching a reply to a question: kandev_slack/usecases/answering/thread_replies.py
# ---------------------------

# ---- what a reply gets ---------------------------------------------------------------------

MessageKind = Literal["text", "file", "me"]


@dataclass(frozen=True)
class ThreadMessage:
    """A person's message in a thread, as the edge parsed it from the ``message`` event."""

    channel: str
    thread_ts: str
    ts: str
    user_id: str
    text: str
    #: The thread is one of this app's messages (``parent_user_id`` is the bot; False: not
    #: known, or someone else's).
    on_app_message: bool = False
    #: ``text``; ``file``: it shares a file; ``me``: a ``/me`` message. Only text is offered.
    kind: MessageKind = "text"


@dataclass(frozen=True)
class ReplyEdited:
    """A person edited their message ``ts`` in a thread (``message_changed``): its text now."""

    channel: str
    thread_ts: str
    ts: str
    user_id: str
    text: str


@dataclass(frozen=True)
class ReplyDeleted:
    """A message ``ts`` was deleted (``message_deleted``)."""

    channel: str
    ts: str


@dataclass(frozen=True)
class DirectMessage:
    """A person wrote to the app in its Messages tab (``message.im``, not in a thread)."""

    channel: str
    user_id: str
    ts: str


@dataclass(frozen=True)
class Ignored:
    """Not a reply to a waiting question card, already offered (a redelivery), or a reply
    from someone who may not answer that does not look like an answer: nothing is said."""

    why: str


@dataclass(frozen=True)
class Offered:
    """Kept: offer it to its author with Send / Cancel."""

    reply: ThreadReply
    card: Card
    question: Question
    option: Option | None
    #: Offered again because its message was edited: Send sends this now.
    edited: bool = False


@dataclass(frozen=True)
class UseTheForm:
    """A multi-question card: point to its **Answer…**."""

    card: Card


@dataclass(frozen=True)
class NotAllowed:
    """Someone who may not answer replied with what looks like an answer: nothing is sent
    (``unverifiable``: whether they may could not be read from Slack: refused all the same)."""

    card: Card
    unverifiable: bool = False


@dataclass(frozen=True)
class TextTooLong:
    card: Card
    length: int


@dataclass(frozen=True)
class NotText:
    """A reply with a file, or a ``/me`` message, from someone who may answer: not offered
    (an agent takes text), the person is told how to answer."""

    card: Card
    kind: MessageKind


@dataclass(frozen=True)
class NotNow:
    """The bot's database did not answer (a reply under one of the app's messages): nothing
    was kept; the person may reply again."""


Received = Ignored | Offered | UseTheForm | NotAllowed | TextTooLong | NotNow | NotText


@dataclass(frozen=True)
class Settled:
    """Send or Cancel on a kept reply that was no longer offered (a double click, or not the
    clicker's): nothing more happens."""

    why: str


@dataclass(frozen=True)
class ToSend:
    """Send was clicked once by the reply's author: the request and answer to admit and send
    through the one pipeline."""

    request: Request
    answers: tuple[Answer, ...]
    reply: ThreadReply
    #: The question it answers (None: its card is gone), to offer it again if nothing was
    #: recorded.
    question: Question | None = None


@dataclass(frozen=True)
class Cancelled:
    reply: ThreadReply


@dataclass(frozen=True)
class Deleted:
    """Send on a reply whose message was deleted (or edited into nothing to send): nothing
    is sent."""

    reply: ThreadReply


# ---- the ports -----------------------------------------------------------------------------


class RepliesStore(Protocol):
    def offer_reply(self, reply: ThreadReply) -> tuple[ThreadReply, bool]: ...
    def thread_reply(self, reply_id: str) -> ThreadReply | None: ...
    def settle_reply(
        self, reply_id: str, user_id: str, state: str, *, was: str = OFFERED
    ) -> bool: ...
    def reply_of_message(self, message_key: str) -> ThreadReply | None: ...
    def revise_reply(self, reply_id: str, *, text: str, option_id: str | None) -> bool: ...
    def withdraw_reply(self, reply_id: str) -> bool: ...


class CardsAt(Protocol):
    def card_at(self, channel: str | None, ts: str | None) -> Card | None: ...


class MayAnswerCard(Protocol):
    def may_answer_card(self, card: Card, user_id: str, *, strict: bool = False) -> bool: ...


@dataclass(eq=False)
class ThreadReplies:
    cards: CardsAt
    replies: RepliesStore
    answerers: MayAnswerCard
    #: Offered and cancelled replies are audited (Send is, by the answer pipeline).
    audit_log: Audit | None = None

    def _audit(self, reply: ThreadReply, result: str) -> None:
        if self.audit_log is None:
            return
        detail = f"reply {reply.id}: " + (
            f"option {reply.option_id}" if reply.option_id else "text"
        )
        try:
            self.audit_log.audit(reply.pending_id, reply.user_id, "answer", SOURCE, result, detail)
        except Exception:  # what the person is told does not depend on it
            log.exception("could not audit a thread reply %s", result)

    def received(self, message: ThreadMessage) -> Received:
        """A person's message in a thread: what it gets (kept when it is offered). It needs
        only the database (never Kandev): when that does not answer, a reply under one of the
        app's messages is told to try again."""
        try:
            return self._received(message)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            log.warning(
                "reply %s in %s not looked at: the database did not answer",
                message.ts,
                message.channel,
            )
            return NotNow() if message.on_app_message else Ignored("database unavailable")

    def _card_at(self, message: ThreadMessage) -> Card | None:
        """The card whose message the thread is, waiting a moment for one just posted."""
        card = self.cards.card_at(message.channel, message.thread_ts)
        if card is not None or not message.on_app_message or not _fresh(message.thread_ts):
            return card
        deadline = time.monotonic() + RECORD_WAIT_S
        while card is None and time.monotonic() < deadline:
            time.sleep(0.05)
            card = self.cards.card_at(message.channel, message.thread_ts)
        return card

    def _received(self, message: ThreadMessage) -> Received:
        card = self._card_at(message)
        if card is None:
            return Ignored("not a card's thread")
        if not spec_of(card).thread_answerable:
            return Ignored("not a question card")
        if card.state.terminal:
            return Ignored("resolved")
        questions = card.bundle.questions
        if not questions:
            return Ignored("no question")
        question = questions[0]
        try:  # a reply in the card's thread proves no membership (a public channel's thread)
            allowed = self.answerers.may_answer_card(card, message.user_id, strict=True)
            unverifiable = False
        except Exception:  # Slack could not say: refused (fail closed), and said so
            log.warning("could not check who may answer %s; refused", card.pending_id)
            allowed, unverifiable = False, True
        if not allowed:
            if len(questions) == 1 and looks_like_an_answer(question, message.text):
                return NotAllowed(card, unverifiable)
            return Ignored("may not answer")
        if message.kind != "text":
            return NotText(card, message.kind)
        if len(questions) > 1:
            return UseTheForm(card)
        match = match_reply(question, message.text)
        if match is None:
            return Ignored("empty")
        if isinstance(match, TooLong):
            return TextTooLong(card, match.length)
        option = match.option if isinstance(match, AsOption) else None
        text = match.text if isinstance(match, AsText) else option.label if option else ""
        kept, new = self.replies.offer_reply(
            ThreadReply(
                id="",
                message_key=f"{message.channel}:{message.ts}",
                pending_id=card.pending_id,
                channel=message.channel,
                thread_ts=message.thread_ts,
                user_id=message.user_id,
                question_id=question.question_id,
                option_id=option.option_id if option else None,
                text=text,
            )
        )
        if not new:
            return Ignored("offered already (a redelivered event)")
        self._audit(kept, "offered")
        return Offered(kept, card, question, option)

    def edited(self, edit: ReplyEdited) -> Received:
        """A kept reply's message was edited while offered: Send sends what it says now
        (offered again, so its author sees it); edited into nothing to send, it is
        withdrawn. An edit of any other message changes nothing."""
        kept = self.replies.reply_of_message(f"{edit.channel}:{edit.ts}")
        if kept is None or kept.state != OFFERED or kept.user_id != edit.user_id:
            return Ignored("not an offered reply")
        card = self.cards.card_at(kept.channel, kept.thread_ts)
        if card is None or not spec_of(card).thread_answerable or card.state.terminal:
            return Ignored("resolved")
        question = next(
            (q for q in card.bundle.questions if q.question_id == kept.question_id), None
        )
        if question is None:
            return Ignored("no question")
        match = match_reply(question, edit.text)
        if match is None or isinstance(match, TooLong):
            self.replies.withdraw_reply(kept.id)
            self._audit(kept, "withdrawn")
            return TextTooLong(card, match.length) if match is not None else Ignored("empty")
        option = match.option if isinstance(match, AsOption) else None
        text = match.text if isinstance(match, AsText) else option.label if option else ""
        option_id = option.option_id if option else None
        if (text, option_id) == (kept.text, kept.option_id):
            return Ignored("unchanged")  # e.g. Slack unfurled a link in it
        if not self.replies.revise_reply(kept.id, text=text, option_id=option_id):
            return Ignored("sent or cancelled meanwhile")
        revised = replace(kept, text=text, option_id=option_id)
        self._audit(revised, "edited")
        return Offered(revised, card, question, option, edited=True)

    def deleted(self, gone: ReplyDeleted) -> bool:
        """A kept reply's message was deleted: Send sends nothing (True when it was offered)."""
        kept = self.replies.reply_of_message(f"{gone.channel}:{gone.ts}")
        if kept is None or not self.replies.withdraw_reply(kept.id):
            return False
        self._audit(kept, "withdrawn")
        return True

    def send(self, reply_id: str, user_id: str) -> ToSend | Settled | Deleted:
        """Send on a kept reply: once, by its author; the request to admit and send (what the
        reply says now: an edit changes it, a deletion withdraws it)."""
        kept = self.replies.thread_reply(reply_id)
        if kept is None or kept.user_id != user_id:
            return Settled("not theirs")
        if kept.state == DELETED:
            return Deleted(kept)
        if not self.replies.settle_reply(reply_id, user_id, SENT):
            return Settled("sent or cancelled already")
        kept = self.replies.thread_reply(reply_id) or kept  # as sent: no edit after this
        request = Request(
            user_id=user_id,
            action="answer",
            source=SOURCE,
            via="card",
            pending_id=kept.pending_id,
            channel=kept.channel,
            ts=kept.thread_ts,
            option=(kept.question_id, kept.option_id) if kept.option_id else None,
            detail=f"reply {kept.id}",
        )
        if kept.option_id:
            answer = Answer(question_id=kept.question_id, selected_options=[kept.option_id])
        else:
            answer = Answer(question_id=kept.question_id, custom_text=kept.text)
        return ToSend(request, (answer,), kept, self._question(kept))

    def _question(self, reply: ThreadReply) -> Question | None:
        card = self.cards.card_at(reply.channel, reply.thread_ts)
        if card is None or not spec_of(card).thread_answerable:
            return None
        return next((q for q in card.bundle.questions if q.question_id == reply.question_id), None)

    def reopen(self, reply_id: str, user_id: str) -> bool:
        """Send recorded nothing (the bot was busy): the reply may be sent again."""
        return self.replies.settle_reply(reply_id, user_id, OFFERED, was=SENT)

    def cancel(self, reply_id: str, user_id: str) -> Cancelled | Settled:
        kept = self.replies.thread_reply(reply_id)
        if kept is not None and kept.user_id == user_id and kept.state == DELETED:
            return Cancelled(kept)  # nothing to send either way: the prompt goes
        if kept is None or not self.replies.settle_reply(reply_id, user_id, CANCELLED):
            return Settled("sent or cancelled already")
        self._audit(kept, "cancelled")
        return Cancelled(kept)


# ------------------------------------------------------------------------------------------
# What a reply in a card's thread says as an answer to its question (pure): an option, named


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
    kandev_slack/slack/parsing/markup.py)."""
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


def _fresh(ts: str) -> bool:
    """Whether a Slack message ts (seconds since the epoch) is less than FRESH_PARENT_S old."""
    try:
        return abs(time.time() - float(ts)) < FRESH_PARENT_S
    except ValueError:
        return False
