"""A reply in a card's thread: matched to an option (label in any case, trimmed; or its
number) or taken as free text (at most 2,000 characters); what the use-case returns for each
kind of reply; the message event parsed at the edge."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.exc import OperationalError

from kandev_slack.cards.limits import KANDEV_MAX_TEXT
from kandev_slack.config.routing import Routing
from kandev_slack.core.clarification import Bundle, Option, Question
from kandev_slack.core.domain import Card, CardState, TaskInfo
from kandev_slack.slack.parsing.requests import direct_message, message_change, thread_message
from kandev_slack.store.cards.thread_replies import CANCELLED, DELETED, OFFERED, SENT, ThreadReply
from kandev_slack.surfaces import thread_reply as thread_reply_words
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.thread_replies import (
    SOURCE,
    AsOption,
    AsText,
    Cancelled,
    Deleted,
    DirectMessage,
    Ignored,
    NotAllowed,
    NotNow,
    NotText,
    Offered,
    ReplyDeleted,
    ReplyEdited,
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


def test_a_number_out_of_range_is_free_text_taken_as_it_is() -> None:
    assert match_reply(DB, "3") == AsText("3")
    assert match_reply(DB, "0") == AsText("0")
    # Slack's markup is undone at the edge (kandev_slack/slack/parsing/markup.py), once: "&lt;"
    # typed stays.
    assert match_reply(DB, "a & b <c> &lt;") == AsText("a & b <c> &lt;")


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

    def reply_of_message(self, message_key: str) -> ThreadReply | None:
        return next((r for r in self.rows.values() if r.message_key == message_key), None)

    def revise_reply(self, reply_id: str, *, text: str, option_id: str | None) -> bool:
        row = self.rows.get(reply_id)
        if row is None or row.state != OFFERED:
            return False
        self.rows[reply_id] = ThreadReply(**{**row.__dict__, "text": text, "option_id": option_id})
        return True

    def withdraw_reply(self, reply_id: str) -> bool:
        row = self.rows.get(reply_id)
        if row is None or row.state != OFFERED:
            return False
        self.rows[reply_id] = ThreadReply(**{**row.__dict__, "state": DELETED})
        return True


class _Cards:
    def __init__(self, card: Card) -> None:
        self.card = card

    def card_at(self, channel: str | None, ts: str | None) -> Card | None:
        return self.card if (channel, ts) == (self.card.channel, self.card.ts) else None


class _Permissions:
    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed

    def may_answer_card(self, card: Card, user_id: str, **_: Any) -> bool:
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


class _DownCards:
    """The bot's database does not answer."""

    def card_at(self, channel: str | None, ts: str | None) -> Card | None:
        raise OperationalError("SELECT", {}, Exception("connection refused"))


def test_a_reply_under_the_app_s_message_is_told_to_try_again_when_the_database_is_down() -> None:
    replies = ThreadReplies(_DownCards(), _Store(), _Permissions({"U1"}))
    on_card = ThreadMessage("C1", "100.1", "100.2", "U1", "2", on_app_message=True)
    assert replies.received(on_card) == NotNow()
    # Someone else's thread: nothing is said about it.
    assert isinstance(replies.received(_said("2")), Ignored)


def test_the_event_says_whether_the_thread_is_under_the_app_s_message() -> None:
    event = {**EVENT, "parent_user_id": "UBOT"}
    assert thread_message(event, bot_user_id="UBOT") == ThreadMessage(
        "C1", "100.1", "100.2", "U1", "2", on_app_message=True
    )
    assert thread_message(event, bot_user_id="UOTHER") == ThreadMessage(
        "C1", "100.1", "100.2", "U1", "2"
    )


# ---- edits, deletions, files, direct messages ---------------------------------------------


def _edit(text: str, user: str = "U1", ts: str = "100.2") -> ReplyEdited:
    return ReplyEdited("C1", "100.1", ts, user, text)


def test_an_edited_reply_is_sent_as_it_reads_now_and_offered_again() -> None:
    replies, store = _replies(_card(DB))
    offered = replies.received(_said("1"))
    assert isinstance(offered, Offered)
    again = replies.edited(_edit("use the cluster"))
    assert isinstance(again, Offered) and again.edited and again.option is None
    assert again.reply.id == offered.reply.id and again.reply.text == "use the cluster"
    assert replies.edited(_edit("use the cluster")) == Ignored("unchanged")
    assert replies.edited(_edit("2", user="U2")) == Ignored("not an offered reply")
    sending = replies.send(offered.reply.id, "U1")
    assert isinstance(sending, ToSend)
    assert [a.custom_text for a in sending.answers] == ["use the cluster"]
    # Once sent, an edit changes nothing.
    assert replies.edited(_edit("2")) == Ignored("not an offered reply")
    assert store.rows[offered.reply.id].text == "use the cluster"


def test_a_deleted_reply_sends_nothing_and_its_prompt_may_go() -> None:
    replies, store = _replies(_card(DB))
    offered = replies.received(_said("2"))
    assert isinstance(offered, Offered)
    assert replies.deleted(ReplyDeleted("C1", "100.2")) is True
    assert replies.deleted(ReplyDeleted("C1", "100.2")) is False  # once
    assert replies.send(offered.reply.id, "U1") == Deleted(store.rows[offered.reply.id])
    assert store.rows[offered.reply.id].state == DELETED
    assert isinstance(replies.cancel(offered.reply.id, "U1"), Cancelled)
    assert replies.deleted(ReplyDeleted("C1", "999.9")) is False  # never offered


def test_a_reply_edited_into_nothing_to_send_is_withdrawn() -> None:
    replies, store = _replies(_card(DB))
    offered = replies.received(_said("2"))
    assert isinstance(offered, Offered)
    assert isinstance(replies.edited(_edit("x" * (KANDEV_MAX_TEXT + 1))), TextTooLong)
    assert isinstance(replies.send(offered.reply.id, "U1"), Deleted)


def test_a_file_or_me_reply_is_not_offered_and_says_why() -> None:
    replies, store = _replies(_card(DB))
    for kind in ("file", "me"):
        message = ThreadMessage("C1", "100.1", f"100.{kind}", "U1", "2", kind=kind)
        assert replies.received(message) == NotText(_card(DB), kind)
    stranger = ThreadMessage("C1", "100.1", "100.5", "U9", "2", kind="file")
    assert isinstance(replies.received(stranger), NotAllowed)
    assert store.rows == {}


def test_file_and_me_replies_are_read_with_their_kind() -> None:
    shared = thread_message({**EVENT, "subtype": "file_share", "files": [{"id": "F1"}]})
    assert shared is not None and shared.kind == "file"
    me = thread_message({**EVENT, "subtype": "me_message"})
    assert me is not None and me.kind == "me"
    attached = thread_message({**EVENT, "files": [{"id": "F1"}]})
    assert attached is not None and attached.kind == "file"


CHANGED = {
    "type": "message",
    "subtype": "message_changed",
    "hidden": True,
    "channel": "C1",
    "ts": "100.9",
    "message": {
        "type": "message",
        "user": "U1",
        "text": "1",
        "ts": "100.2",
        "thread_ts": "100.1",
        "edited": {"user": "U1", "ts": "100.9"},
    },
    "previous_message": {"type": "message", "user": "U1", "text": "2", "ts": "100.2"},
}


def test_an_edit_and_a_deletion_are_read_from_slack_s_events() -> None:
    assert message_change(CHANGED) == ReplyEdited("C1", "100.1", "100.2", "U1", "1")
    deleted = {"type": "message", "subtype": "message_deleted", "channel": "C1", "ts": "100.9"}
    assert message_change({**deleted, "deleted_ts": "100.2"}) == ReplyDeleted("C1", "100.2")
    assert message_change(deleted) is None
    parent = {**CHANGED["message"], "ts": "100.1"}  # a card's reply count changed
    assert message_change({**CHANGED, "message": parent}) is None
    by_bot = {**CHANGED["message"], "bot_id": "B1"}
    assert message_change({**CHANGED, "message": by_bot}) is None
    assert message_change(EVENT) is None


def test_a_message_to_the_app_is_read_only_outside_threads_and_from_people() -> None:
    im = {**EVENT, "channel": "D1", "channel_type": "im"}
    del im["thread_ts"]
    assert direct_message(im) == DirectMessage("D1", "U1", "100.2")
    assert direct_message({**im, "thread_ts": "100.1"}) is None  # a reply in a DM card's thread
    assert direct_message({**im, "bot_id": "B1"}) is None
    assert direct_message({**im, "channel_type": "channel"}) is None
    assert direct_message({**im, "subtype": "message_changed"}) is None


def _replies_under_the_rule(card: Card) -> tuple[ThreadReplies, FakeSlackGateway]:
    """Thread replies under the real rule: a route without answerers (its channel's members
    of the app's own organisation), Slack faked at the edge."""
    gateway = FakeSlackGateway()
    answerers = Answerers(Routing(default_channel=card.channel), gateway)
    return ThreadReplies(_Cards(card), _Store(), answerers), gateway


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


class _Recording(_Cards):
    """A card whose message the bot records ``after`` lookups (it was posted a moment ago)."""

    def __init__(self, card: Card, after: int) -> None:
        super().__init__(card)
        self.after, self.looks = after, 0

    def card_at(self, channel: str | None, ts: str | None) -> Card | None:
        self.looks += 1
        return super().card_at(channel, ts) if self.looks > self.after else None


def test_a_reply_under_a_card_posted_a_moment_ago_waits_for_its_record() -> None:
    posted = f"{time.time():.6f}"  # the app's message, just posted
    card = _card(_question(["Postgres", "MongoDB"])).model_copy(update={"ts": posted})
    cards = _Recording(card, after=3)
    replies = ThreadReplies(cards, _Store(), _Permissions({"U1"}))
    reply = ThreadMessage("C1", posted, f"{time.time():.6f}", "U1", "mongodb", True)
    assert isinstance(replies.received(reply), Offered)
    assert cards.looks == 4


def test_a_reply_under_an_old_or_someone_else_s_message_is_not_waited_for() -> None:
    card = _card(_question(["Postgres", "MongoDB"]))  # its message: ts 100.1, long ago
    for on_app_message in (True, False):
        cards = _Recording(card, after=1_000)
        replies = ThreadReplies(cards, _Store(), _Permissions({"U1"}))
        started = time.monotonic()
        reply = ThreadMessage("C1", "100.1", "100.2", "U1", "mongodb", on_app_message)
        assert isinstance(replies.received(reply), Ignored)
        assert cards.looks == 1 and time.monotonic() - started < 0.5
