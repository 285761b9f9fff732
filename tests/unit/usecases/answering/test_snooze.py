"""Snooze (kandev_slack/usecases/answering/snooze.py) on a store whose clock the test moves: a
snooze collapses
the person's DM card (never anyone else's, never the channel card), Unsnooze restores it, a
repeated or redelivered choice changes nothing, a snooze ends once — its DM card restored and
"Back from snooze" in its thread — and a resolved item's snooze is deleted; admission refuses
resolved items, channel cards and approvals; the Home and the listing leave snoozed items out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kandev_slack.core.approval import Approval, ToolOption
from kandev_slack.core.domain import Card
from kandev_slack.core.outbox import POST_COPY, copy_post_key
from kandev_slack.core.signals import Signal
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.store.cards.copies import Copy
from kandev_slack.surfaces.waiting import Query
from kandev_slack.usecases.answering.admission import Admission, Admitted, Refusal, Request
from kandev_slack.usecases.answering.snooze import (
    NotSnoozed,
    Snoozed,
    SnoozeRedelivered,
    Snoozes,
    SnoozeWorker,
    Unsnoozed,
)
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.views.home import HomeService
from kandev_slack.usecases.views.listing import ListingService
from kandev_slack.usecases.views.waiting import WaitingQueue
from tests.kit.factories import ALICE_ID, KANDEV_URL, numbered_bundle
from tests.kit.fakes import FakeClock, FakeKandev, FakeSlackGateway
from tests.unit.usecases.test_card_messages import add_copy

BOB_ID = "U0BOB00002"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 12, 1, 10, 0, tzinfo=UTC))


@pytest.fixture
def snoozes(store: Database, publisher: Publisher) -> Snoozes:
    return Snoozes(store.snoozes, store.cards, store.audit_log, publisher.wake, publisher.changed)


@pytest.fixture
def dm(store: Database, publisher: Publisher, card: Card, drain) -> Copy:
    """Bob's DM card of ``card`` (a subscription), posted."""
    add_copy(store, publisher, card, f"dm:{card.pending_id}:{BOB_ID}", BOB_ID)
    drain()
    copy = store.cards.message_get(f"dm:{card.pending_id}:{BOB_ID}")
    assert copy is not None and copy.ts and copy.channel
    return copy


def choice(card: Card, user: str, copy: Copy | None, action: str = "snooze", **more):
    """The person's choice on ``copy`` (their DM card), or on their App Home (``copy`` None)."""
    where = {"via": "home"}
    if copy is not None:
        where = {"via": "card", "channel": copy.channel, "ts": copy.ts}
    fields: dict = {
        "user_id": user,
        "action": action,
        "source": "slack:select" if action == "snooze" else "slack:button",
        "pending_id": card.pending_id,
        "hours": 4 if action == "snooze" else 0,
        **where,
    }
    return Request(**{**fields, **more})


def admitted(admission: Admission, request: Request) -> Admitted:
    result = admission.admit(request)
    assert isinstance(result, Admitted), result
    return result


def shown(gateway: FakeSlackGateway, copy: Copy) -> list[dict]:
    assert copy.channel and copy.ts
    return gateway.cards[(copy.channel, copy.ts)][0].blocks


def is_collapsed(gateway: FakeSlackGateway, copy: Copy) -> bool:
    return any(b.get("block_id") == "kq_snoozed" for b in shown(gateway, copy))


def has_select(blocks: list[dict]) -> bool:
    return any(
        e.get("type") == "static_select" for b in blocks for e in b.get("elements", []) or []
    )


def test_a_snooze_collapses_the_person_s_dm_card_and_unsnooze_restores_it(
    admission, snoozes, drain, gateway, store, card, dm, clock
) -> None:
    assert has_select(shown(gateway, dm))
    assert not has_select(gateway.cards[(card.channel, card.ts)][0].blocks)  # channel card
    result = snoozes.snooze(admitted(admission, choice(card, BOB_ID, dm)), 4)
    assert isinstance(result, Snoozed) and not result.again
    assert result.snooze.until == clock() + timedelta(hours=4)
    drain()
    assert is_collapsed(gateway, dm)
    text = shown(gateway, dm)[0]["text"]["text"]
    assert text.startswith("💤 Snoozed until <!date^")
    assert snoozes.snoozed_ids(BOB_ID) == {card.pending_id}
    assert snoozes.snoozed_ids(ALICE_ID) == set()

    back = snoozes.unsnooze(admitted(admission, choice(card, BOB_ID, None, "unsnooze")))
    assert isinstance(back, Unsnoozed)
    drain()
    assert not is_collapsed(gateway, dm) and has_select(shown(gateway, dm))
    again = snoozes.unsnooze(admitted(admission, choice(card, BOB_ID, None, "unsnooze")))
    assert isinstance(again, NotSnoozed)
    audited = [(e.action, e.result) for e in store.audit_log.audit_entries(card.pending_id)]
    assert ("snooze", "ok") in audited and ("unsnooze", "ok") in audited


def test_choosing_again_or_a_redelivery_changes_nothing_a_new_length_does(
    admission, snoozes, drain, gateway, store, card, dm, clock
) -> None:
    first = snoozes.snooze(admitted(admission, choice(card, BOB_ID, dm)), 4)
    assert isinstance(first, Snoozed)
    drain()
    edits = len(gateway.called("chat.update"))
    clock.advance(2)
    double = snoozes.snooze(admitted(admission, choice(card, BOB_ID, None)), 4)
    assert isinstance(double, Snoozed) and double.again and double.snooze == first.snooze
    redelivered = admitted(admission, choice(card, BOB_ID, None, redelivery=True))
    assert isinstance(snoozes.snooze(redelivered, 4), SnoozeRedelivered)
    drain()
    assert len(gateway.called("chat.update")) == edits  # nothing was edited again

    longer = snoozes.snooze(admitted(admission, choice(card, BOB_ID, None, hours=24)), 24)
    assert isinstance(longer, Snoozed) and not longer.again
    assert longer.snooze.token != first.snooze.token
    assert longer.snooze.until == clock() + timedelta(hours=24)
    entries = [e for e in store.audit_log.audit_entries(card.pending_id) if e.action == "snooze"]
    assert sorted(e.detail for e in entries) == ["24 h", "4 h"]  # once each


def test_a_snooze_ends_once_with_its_dm_card_restored_and_a_notice_in_its_thread(
    admission, snoozes, drain, gateway, store, card, dm, clock
) -> None:
    snoozes.snooze(admitted(admission, choice(card, BOB_ID, dm)), 1)
    drain()
    worker = SnoozeWorker(snoozes, Health())
    clock.advance(3599)
    assert worker.work_once() == 0
    clock.advance(2)
    assert worker.work_once() == 1
    assert worker.work_once() == 0  # ended once
    drain()
    assert not is_collapsed(gateway, dm)
    replies = gateway.called("chat.postMessage:reply")
    assert [(r["channel"], r["thread_ts"], r["text"]) for r in replies] == [
        (dm.channel, dm.ts, "⏰ Back from snooze: Pick a datastore is still waiting for an answer")
    ]
    assert store.snoozes.snooze_of(BOB_ID, card.pending_id) is None
    ended = [
        e for e in store.audit_log.audit_entries(card.pending_id) if e.action == "snooze_ended"
    ]
    assert [(e.user, e.result) for e in ended] == [(BOB_ID, "ok")]


def test_a_resolved_item_s_snooze_is_deleted_and_a_snooze_of_it_is_refused(
    admission, snoozes, drain, gateway, store, card, dm, alice_answers
) -> None:
    snoozes.snooze(admitted(admission, choice(card, BOB_ID, dm)), 24)
    drain()
    alice_answers(card)
    drain()
    assert not is_collapsed(gateway, dm)  # the DM card shows the outcome, not the snooze
    assert SnoozeWorker(snoozes, Health()).work_once() == 1
    assert store.snoozes.snooze_of(BOB_ID, card.pending_id) is None
    assert gateway.called("chat.postMessage:reply") == []  # no "Back from snooze"
    ended = [
        e for e in store.audit_log.audit_entries(card.pending_id) if e.action == "snooze_ended"
    ]
    assert [e.result for e in ended] == ["resolved"]

    refused = admission.admit(choice(card, BOB_ID, None))
    assert isinstance(refused, Refusal) and refused.kind == "resolved_already"


def test_snooze_is_refused_on_a_channel_card_and_needs_no_answer_permission(
    admission, snoozes, card, dm
) -> None:
    on_channel = choice(card, BOB_ID, None, via="card", channel=card.channel, ts=card.ts)
    refused = admission.admit(on_channel)
    assert isinstance(refused, Refusal) and refused.kind == "tampered"
    stranger = admission.admit(choice(card, "U0NOBODY01", dm))
    assert isinstance(stranger, Admitted)  # only the person's own views change


def test_home_and_listing_leave_the_person_s_snoozed_items_out(
    admission,
    snoozes,
    store,
    card,
    fake_kandev: FakeKandev,
    queue: WaitingQueue,
    gateway,
) -> None:
    fake_kandev.add(numbered_bundle(2), title="Still listed")
    snoozes.snooze(admitted(admission, choice(card, BOB_ID, None)), 4)

    listing = ListingService(queue, fake_kandev, kandev_url=KANDEV_URL, snoozed=snoozes.snoozed_ids)
    bobs = listing.page(Query(), BOB_ID)
    assert [it.pending_id for it in bobs.items] == ["pending-002"] and bobs.snoozed == 1
    alices = listing.page(Query(), ALICE_ID)
    assert {it.pending_id for it in alices.items} == {card.pending_id, "pending-002"}
    assert alices.snoozed == 0

    home = HomeService(
        queue,
        store.cards,
        store.followups,
        store.viewers,
        gateway,
        Signal("card changed"),
        kandev_url=KANDEV_URL,
        snoozes=snoozes,
    )
    text = str(home.build(BOB_ID)["blocks"])
    waiting, _, rest = text.partition("💤 Snoozed (1)")
    assert "Still listed" in waiting and "Pick a datastore" not in waiting
    assert "Pick a datastore" in rest.partition("Recently resolved")[0]
    assert "💤 Snoozed" not in str(home.build(ALICE_ID)["blocks"])


def test_an_approval_gets_no_snooze(card, dm) -> None:
    approval = Approval(
        task_id=card.task_id,
        session_id="s-1",
        request_id="r-1",
        pending_id=card.pending_id,
        created_at=card.created_at,
        options=(ToolOption(option_id="allow", name="Allow", kind="allow_once"),),
    )
    on_approval = card.model_copy(update={"item": approval})
    refused = Admission._option_problem(choice(card, BOB_ID, dm), on_approval)
    assert isinstance(refused, Refusal) and refused.kind == "tampered"
    assert Admission._option_problem(choice(card, BOB_ID, dm), card) is None


def test_an_escalation_card_in_a_person_s_dm_snoozes_like_a_dm_card(
    admission, snoozes, drain, gateway, store, publisher, card
) -> None:
    key = f"escalation:{card.pending_id}"
    assert store.cards.message_add(key, card.pending_id, "escalation", BOB_ID, note="🔺 Escalated")
    store.outbox.outbox_put(
        POST_COPY, copy_post_key(key), {"pending_id": card.pending_id, "key": key}, BOB_ID
    )
    drain()
    copy = store.cards.message_get(key)
    assert copy is not None and copy.ts and has_select(shown(gateway, copy))
    snoozes.snooze(admitted(admission, choice(card, BOB_ID, copy)), 1)
    drain()
    assert is_collapsed(gateway, copy)


def test_an_escalation_card_in_a_channel_offers_no_snooze(
    drain, gateway, store, publisher, card
) -> None:
    key = f"escalation:{card.pending_id}"
    assert store.cards.message_add(key, card.pending_id, "escalation", "C0LEADS001", note="🔺")
    store.outbox.outbox_put(
        POST_COPY, copy_post_key(key), {"pending_id": card.pending_id, "key": key}, "C0LEADS001"
    )
    drain()
    copy = store.cards.message_get(key)
    assert copy is not None and copy.ts and not has_select(shown(gateway, copy))
