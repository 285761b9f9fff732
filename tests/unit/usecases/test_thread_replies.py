"""A reply in a card's thread: matched to an option (label in any case, trimmed; or its
number) or taken as free text (at most 2,000 characters); what the use-case returns for each
kind of reply; the message event parsed at the edge."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cards import thread_reply as thread_reply_words
from bot.cards.limits import KANDEV_MAX_TEXT
from bot.config.routing import Routing
from bot.core.clarification import Bundle, Option, Question
from bot.core.domain import Card, CardState, TaskInfo
from bot.slack.requests import thread_message
from bot.store.thread_replies import CANCELLED, OFFERED, SENT, ThreadReply
from bot.usecases.permissions import Permissions
from bot.usecases.thread_replies import (
    SOURCE,
    AsOption,
    AsText,
    Ignored,
    NotAllowed,
    Offered,
    Settled,
    TextTooLong,
    ThreadMessage,
    ThreadReplies,
    TooLong,
    ToSend,
    UseTheForm,
    match_reply,
)
from tests.kit.fakes import FakeSlackGateway
from tests.unit.properties import examples

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
LABELS = st.lists(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)
    .map(str.strip)
    .filter(lambda s: s and not s.isdigit()),
    min_size=2,
    max_size=6,
    unique_by=lambda s: " ".join(s.split()).casefold(),
)
PROPERTY = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _question(labels: list[str]) -> Question:
    options = [Option(option_id=f"q1_opt{n}", label=label) for n, label in enumerate(labels, 1)]
    return Question(question_id="db", title="Database", prompt="Which?", options=options)


DB = _question(["PostgreSQL", "MongoDB"])


@PROPERTY
@given(labels=LABELS, data=st.data())
def test_a_label_in_any_case_with_spaces_around_is_that_option(labels, data) -> None:
    question = _question(labels)
    index = data.draw(st.integers(0, len(labels) - 1))
    pad = data.draw(st.sampled_from(["", " ", "  \n", "\t"]))
    typed = pad + data.draw(st.sampled_from([str.upper, str.lower, str.title]))(labels[index])
    match = match_reply(question, typed + pad)
    # a case change may collide with another label only when they fold alike (excluded above)
    if " ".join(typed.split()).casefold() == " ".join(labels[index].split()).casefold():
        assert match == AsOption(question.options[index])


@PROPERTY
@given(labels=LABELS, data=st.data())
def test_an_option_number_is_that_option(labels, data) -> None:
    question = _question(labels)
    number = data.draw(st.integers(1, len(labels)))
    assert match_reply(question, f" {number} ") == AsOption(question.options[number - 1])


@PROPERTY
@given(text=st.text(min_size=1, max_size=300))
def test_anything_else_is_free_text_trimmed_and_never_an_option(text) -> None:
    match = match_reply(DB, text)
    folded = " ".join(text.split()).casefold()
    if not text.strip():
        assert match is None
    elif folded in ("postgresql", "mongodb") or text.strip() in ("1", "2"):
        assert isinstance(match, AsOption)
    else:
        assert match == AsText(text.strip())


def test_a_number_out_of_range_is_free_text_and_slack_escapes_are_undone() -> None:
    assert match_reply(DB, "3") == AsText("3")
    assert match_reply(DB, "0") == AsText("0")
    assert match_reply(DB, "a &amp; b &lt;c&gt;") == AsText("a & b <c>")


def test_free_text_over_the_limit_is_too_long() -> None:
    assert match_reply(DB, "x" * KANDEV_MAX_TEXT) == AsText("x" * KANDEV_MAX_TEXT)
    assert match_reply(DB, "x" * (KANDEV_MAX_TEXT + 1)) == TooLong(KANDEV_MAX_TEXT + 1)


# ---- the use-case --------------------------------------------------------------------------


class _Store:
    def __init__(self) -> None:
        self.rows: dict[str, ThreadReply] = {}

    def offer_reply(self, reply: ThreadReply) -> tuple[ThreadReply, bool]:
        for row in self.rows.values():
            if row.message_key == reply.message_key:
                return row, False
        kept = ThreadReply(**{**reply.__dict__, "id": f"r{len(self.rows) + 1}"})
        self.rows[kept.id] = kept
        return kept, True

    def thread_reply(self, reply_id: str) -> ThreadReply | None:
        return self.rows.get(reply_id)

    def settle_reply(self, reply_id: str, user_id: str, state: str, *, was: str = OFFERED) -> bool:
        row = self.rows.get(reply_id)
        if row is None or row.user_id != user_id or row.state != was:
            return False
        self.rows[reply_id] = ThreadReply(**{**row.__dict__, "state": state})
        return True


class _Cards:
    def __init__(self, card: Card) -> None:
        self.card = card

    def card_at(self, channel: str | None, ts: str | None) -> Card | None:
        return self.card if (channel, ts) == (self.card.channel, self.card.ts) else None


class _Permissions:
    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed

    def may_act(self, card: Card, user_id: str, **_: Any) -> bool:
        return user_id in self.allowed


def _card(*questions: Question, state: CardState = CardState.PENDING) -> Card:
    bundle = Bundle(pending_id="p1", task_id="t1", created_at=NOW, questions=list(questions))
    return Card(
        pending_id="p1",
        task_id="t1",
        channel="C1",
        ts="100.1",
        state=state,
        item=bundle,
        task=TaskInfo(task_id="t1"),
        created_at=NOW,
        updated_at=NOW,
    )


def _replies(card: Card, allowed=("U1",)) -> tuple[ThreadReplies, _Store]:
    store = _Store()
    return ThreadReplies(_Cards(card), store, _Permissions(set(allowed))), store


def _said(text: str, user: str = "U1", ts: str = "100.2", thread: str = "100.1") -> ThreadMessage:
    return ThreadMessage("C1", thread, ts, user, text)


def test_a_reply_is_kept_once_and_send_is_a_request_through_admission_once() -> None:
    replies, store = _replies(_card(DB))
    offered = replies.received(_said("2"))
    assert isinstance(offered, Offered) and offered.option == DB.options[1]
    assert replies.received(_said("2")) == Ignored("offered already (a redelivered event)")

    sending = replies.send(offered.reply.id, "U1")
    assert isinstance(sending, ToSend)
    request = sending.request
    assert (request.source, request.via, request.channel, request.ts) == (
        SOURCE,
        "card",
        "C1",
        "100.1",
    )
    assert request.option == ("db", "q1_opt2") and request.pending_id == "p1"
    assert replies.send(offered.reply.id, "U1") == Settled("sent or cancelled already")
    assert store.rows[offered.reply.id].state == SENT


def test_free_text_is_sent_as_custom_text_and_only_its_author_may_send_or_cancel() -> None:
    replies, store = _replies(_card(DB), allowed=("U1", "U2"))
    offered = replies.received(_said("use the cluster"))
    assert isinstance(offered, Offered) and offered.option is None
    assert replies.send(offered.reply.id, "U2") == Settled("not theirs")
    assert isinstance(replies.cancel(offered.reply.id, "U2"), Settled)
    assert replies.cancel(offered.reply.id, "U1") != Settled("sent or cancelled already")
    assert store.rows[offered.reply.id].state == CANCELLED
    assert isinstance(replies.send(offered.reply.id, "U1"), Settled)


@pytest.mark.parametrize(
    ("card", "message", "expected"),
    [
        (_card(DB, _question(["a", "b"])), _said("1"), UseTheForm),
        (_card(DB), _said("MongoDB", user="U9"), NotAllowed),
        (_card(DB), _said("I'd ask Ana", user="U9"), Ignored),
        (_card(DB), _said("x" * (KANDEV_MAX_TEXT + 1)), TextTooLong),
        (_card(DB), _said("2", thread="999.9"), Ignored),
        (_card(DB, state=CardState.ANSWERED), _said("2"), Ignored),
        (_card(DB), _said("   "), Ignored),
    ],
)
def test_what_each_kind_of_reply_gets(card: Card, message: ThreadMessage, expected: type) -> None:
    replies, store = _replies(card)
    assert isinstance(replies.received(message), expected)
    assert store.rows == {}


# ---- the message event, at the edge --------------------------------------------------------

EVENT = {
    "type": "message",
    "channel": "C1",
    "user": "U1",
    "text": "2",
    "ts": "100.2",
    "thread_ts": "100.1",
    "client_msg_id": "m-1",
}


@pytest.mark.parametrize(
    "change",
    [
        {"bot_id": "B1"},
        {"subtype": "message_changed"},
        {"subtype": "channel_join"},
        {"edited": {"user": "U1", "ts": "100.3"}},
        {"thread_ts": None},
        {"thread_ts": "100.2"},  # the thread's parent itself
        {"user": None},
        {"text": None},
    ],
)
def test_only_a_person_s_new_reply_in_a_thread_is_read(change: dict[str, Any]) -> None:
    assert thread_message({**EVENT, **change}) is None


def test_a_reply_and_a_reply_also_sent_to_the_channel_are_read() -> None:
    assert thread_message(EVENT) == ThreadMessage("C1", "100.1", "100.2", "U1", "2")
    assert thread_message({**EVENT, "subtype": "thread_broadcast"}) is not None


def test_a_send_that_recorded_nothing_gives_the_reply_back_to_its_author_only() -> None:
    replies, store = _replies(_card(DB), allowed=("U1", "U2"))
    offered = replies.received(_said("2"))
    assert isinstance(offered, Offered)
    assert isinstance(replies.send(offered.reply.id, "U1"), ToSend)
    assert replies.reopen(offered.reply.id, "U2") is False  # not theirs
    assert replies.reopen(offered.reply.id, "U1") is True
    assert store.rows[offered.reply.id].state == OFFERED
    assert isinstance(replies.send(offered.reply.id, "U1"), ToSend)  # Send works again

    cancelled = replies.received(_said("1", ts="100.3"))
    assert isinstance(cancelled, Offered)
    replies.cancel(cancelled.reply.id, "U1")
    assert replies.reopen(cancelled.reply.id, "U1") is False  # a cancelled reply stays so


def _replies_under_the_rule(card: Card) -> tuple[ThreadReplies, FakeSlackGateway]:
    """Thread replies under the real rule: a route without answerers (its channel's members
    of the app's own organisation), Slack faked at the edge."""
    gateway = FakeSlackGateway()
    permissions = Permissions(Routing(default_channel=card.channel), gateway)
    return ThreadReplies(_Cards(card), _Store(), permissions), gateway


def test_a_reply_from_a_person_of_another_organisation_is_not_an_answer() -> None:
    card = _card(DB)
    replies, gateway = _replies_under_the_rule(card)
    gateway.other_organisations["U9"] = "T0PARTNER1"  # Slack Connect, in the shared channel

    received = replies.received(_said("MongoDB", user="U9"))

    assert received == NotAllowed(card)
    assert isinstance(replies.received(_said("MongoDB", user="U1", ts="100.3")), Offered)


def test_a_reply_whose_author_cannot_be_checked_is_refused_with_try_again() -> None:
    card = _card(DB)
    replies, gateway = _replies_under_the_rule(card)
    gateway.fail("users.info", "internal_error")

    received = replies.received(_said("MongoDB", user="U1"))

    assert received == NotAllowed(card, unverifiable=True)
    told = thread_reply_words.reply_not_allowed_message(unverifiable=True)
    assert "could not check" in told and "try again" in told
