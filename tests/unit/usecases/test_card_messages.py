"""A bundle's several messages: its channel card plus escalation and DM copies. Each copy is
posted once (never for a resolved bundle), every message is edited to the outcome exactly once,
and a click on any of them goes through the same admission step."""

from __future__ import annotations

import json

from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardState
from kandev_slack.core.outbox import POST_COPY, REPLY, copy_post_key, reply_key
from kandev_slack.store import Database
from kandev_slack.usecases.answering.admission import Admission, Admitted, Refusal, Request
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.outbox.publisher import Publisher
from tests.kit.factories import ALICE_ID, CHANNEL, make_bundle
from tests.kit.fakes import FakeSlackGateway

LEADS = "C0LEADS0001"
BOB = "U0BOB00002"
MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])


def add_copy(store: Database, publisher: Publisher, card: Card, key: str, target: str) -> None:
    kind = "dm" if target.startswith("U") else "escalation"
    assert store.cards.message_add(key, card.pending_id, kind, target, note=f"note of {key}")
    store.outbox.outbox_put(
        POST_COPY,
        copy_post_key(key),
        {"pending_id": card.pending_id, "key": key},
        channel=target,
    )
    publisher.wake()


def drain(publisher: Publisher) -> None:
    while publisher.work_once():
        pass


def posts_in(gateway: FakeSlackGateway, channel: str) -> list[dict]:
    return [c for c in gateway.called("chat.postMessage") if c["channel"] == channel]


def updates_in(gateway: FakeSlackGateway, channel: str) -> list[dict]:
    return [c for c in gateway.called("chat.update") if c["channel"] == channel]


def click_on(channel: str, ts: str, card: Card, user: str = ALICE_ID) -> Request:
    return Request(
        user_id=user,
        action="answer",
        source="slack:button",
        via="card",
        pending_id=card.pending_id,
        channel=channel,
        ts=ts,
        option=("q1", "q1_opt2"),
    )


def test_copies_are_posted_once_and_every_message_is_edited_once_on_resolution(
    posted,
    store: Database,
    publisher: Publisher,
    gateway: FakeSlackGateway,
    answers: AnswerService,
    admission: Admission,
) -> None:
    card = posted(make_bundle())
    add_copy(store, publisher, card, f"escalation:{card.pending_id}", LEADS)
    add_copy(store, publisher, card, f"dm:{card.pending_id}:{BOB}", BOB)
    drain(publisher)

    leads = posts_in(gateway, LEADS)
    assert len(leads) == 1
    assert leads[0]["message"].blocks[0]["text"]["text"] == f"note of escalation:{card.pending_id}"
    assert gateway.called("conversations.open") == [{"users": BOB}]
    dm = "D" + BOB[1:]
    assert len(posts_in(gateway, dm)) == 1
    copies = {m.key: m for m in store.cards.messages_of(card.pending_id)}
    assert {m.channel for m in copies.values()} == {LEADS, dm}
    assert all(m.ts for m in copies.values())

    # Answered from the escalation card: admitted on that message, credited like the card.
    esc = copies[f"escalation:{card.pending_id}"]
    admitted = admission.admit(click_on(LEADS, esc.ts, card))
    assert isinstance(admitted, Admitted) and admitted.card.pending_id == card.pending_id
    verdict = answers.submit(admitted, answers=(MONGO,))
    assert verdict.kind == "won"
    drain(publisher)
    drain(publisher)

    assert len(updates_in(gateway, CHANNEL)) == 1
    assert len(updates_in(gateway, LEADS)) == 1
    assert len(updates_in(gateway, dm)) == 1
    for channel in (CHANNEL, LEADS, dm):
        blocks = updates_in(gateway, channel)[0]["message"].blocks
        assert f"Answered by <@{ALICE_ID}>" in json.dumps(blocks), channel
    # Nothing more to do, and a late resolution signal edits nothing twice.
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.state is CardState.ANSWERED
    publisher.enqueue_update(resolved)
    drain(publisher)
    assert len(gateway.called("chat.update")) == 3


def test_a_copy_of_a_resolved_bundle_is_never_posted(
    posted,
    store: Database,
    publisher: Publisher,
    gateway: FakeSlackGateway,
    answers: AnswerService,
    admission: Admission,
) -> None:
    card = posted(make_bundle())
    admitted = admission.admit(click_on(CHANNEL, card.ts or "", card))
    assert isinstance(admitted, Admitted)
    assert answers.submit(admitted, answers=(MONGO,)).kind == "won"
    add_copy(store, publisher, card, f"escalation:{card.pending_id}", LEADS)
    drain(publisher)
    assert posts_in(gateway, LEADS) == []


def test_a_click_on_a_copy_of_another_bundle_is_tampered_and_an_unknown_message_unknown(
    posted, store: Database, publisher: Publisher, admission: Admission
) -> None:
    card = posted(make_bundle())
    other = posted(make_bundle(pending_id="pending-other", task_id="task-other"))
    add_copy(store, publisher, card, f"escalation:{card.pending_id}", LEADS)
    drain(publisher)
    esc = store.cards.messages_of(card.pending_id)[0]
    refused = admission.admit(click_on(LEADS, esc.ts or "", other))
    assert isinstance(refused, Refusal) and refused.kind == "tampered"
    unknown = admission.admit(click_on(LEADS, "1700000099.000001", card))
    assert isinstance(unknown, Refusal) and unknown.kind == "unknown_bundle"


def test_a_copy_slack_refuses_goes_in_its_plain_form_and_a_refused_reply_is_not_resent(
    posted, store: Database, publisher: Publisher, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())
    key = f"escalation:{card.pending_id}"
    gateway.fail("chat.postMessage", "msg_too_long")
    add_copy(store, publisher, card, key, LEADS)
    drain(publisher)

    first, plain = posts_in(gateway, LEADS)
    assert first["message"].blocks[0]["text"]["text"] == f"note of {key}"
    assert "cannot be shown here" in plain["message"].text
    copy = store.cards.message_get(key)
    assert copy is not None and copy.ts
    audited = [(e.action, e.result) for e in store.audit_log.audit_entries(card.pending_id)]
    assert ("slack_post_copy", "plain") in audited

    # A thread reply has no plain form: Slack's refusal is final (marked failed, audited).
    gateway.fail("chat.postMessage:reply", "msg_too_long")
    store.outbox.outbox_put(
        REPLY, reply_key("r1"), {"pending_id": card.pending_id, "key": "r1", "text": "Still?"}
    )
    drain(publisher)
    assert len(gateway.called("chat.postMessage:reply")) == 1
    audited = [(e.action, e.result) for e in store.audit_log.audit_entries(card.pending_id)]
    assert ("slack_reply", "failed") in audited
