"""The publisher's priorities (issue 35): a card's own edit goes out before other cards' group
lines, the group lines of one card pile up into one edit (never dropped: each is finished as
"absorbed" by the edit that shows it), and every write waits first — boundedly — for the
urgent work in flight (an ack, an answer not yet sent to Kandev)."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import select

from kandev_slack.core.domain import Card, CardOutcome, CardState
from kandev_slack.ops.health import Health
from kandev_slack.ops.urgency import Urgency
from kandev_slack.store import Database
from kandev_slack.store.schema import outbox
from kandev_slack.usecases.groups import GroupEdit
from kandev_slack.usecases.outbox import publisher as publisher_module
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.wiring import build_publisher
from tests.kit.factories import CHANNEL, NOW, record_card
from tests.kit.fakes import FakeSlackGateway

KANDEV_URL = "https://kandev.example.test"


def _publisher(
    store: Database,
    gateway: FakeSlackGateway,
    *,
    delay_s: float = 0.0,
    urgency: Urgency | None = None,
) -> Publisher:
    return build_publisher(
        store.outbox,
        store.cards,
        store.audit_log,
        gateway,
        kandev_url=KANDEV_URL,
        health=Health(),
        post_spacing_s=0,
        group_line_delay_s=delay_s,
        urgency=urgency,
    )


def _drain(publisher: Publisher) -> None:
    while publisher.work_once():
        pass


def _posted(store: Database, publisher: Publisher, pending_id: str) -> Card:
    """A waiting card, its message posted."""
    record_card(store, pending_id, channel=CHANNEL)
    card = store.cards.get(pending_id)
    assert card is not None
    publisher.enqueue_post(card)
    _drain(publisher)
    card = store.cards.get(pending_id)
    assert card is not None and card.ts is not None
    return card


def _answered(store: Database, card: Card) -> Card:
    outcome = CardOutcome(state=CardState.ANSWERED, via="slack", by_user="U0ALICE001", at=NOW)
    assert store.cards.transition(card.pending_id, outcome)
    answered = store.cards.get(card.pending_id)
    assert answered is not None
    return answered


def _updated(gateway: FakeSlackGateway) -> list[str]:
    """The cards edited (chat.update), in order."""
    return [call["pending_id"] for call in gateway.called("chat.update")]


def test_a_cards_own_edit_goes_before_a_pile_of_other_cards_group_lines(
    store: Database, gateway: FakeSlackGateway
) -> None:
    publisher = _publisher(store, gateway)
    others = [_posted(store, publisher, f"other-{n}") for n in range(8)]
    clicked = _posted(store, publisher, "clicked")
    gateway.calls.clear()
    # Eight other cards' group lines queued first, then the clicked card's own edit.
    publisher.enqueue_group(
        [GroupEdit(card, f"group:joined:x-{n}") for n, card in enumerate(others)]
    )
    publisher.enqueue_update(_answered(store, clicked))
    _drain(publisher)
    assert _updated(gateway) == ["clicked", *[card.pending_id for card in others]]


def test_group_lines_are_due_later_so_own_edits_queued_meanwhile_overtake_them(
    store: Database, gateway: FakeSlackGateway
) -> None:
    publisher = _publisher(store, gateway, delay_s=2.0)  # longer than a slow machine's steps
    first = _posted(store, publisher, "first")
    clicked = [_posted(store, publisher, f"clicked-{n}") for n in range(3)]
    gateway.calls.clear()
    for n, card in enumerate(clicked):  # each click: its own edit, then the first card's line
        publisher.enqueue_update(_answered(store, card))
        publisher.enqueue_group([GroupEdit(first, f"group:left:{card.pending_id}")])
        if n == 0:
            assert publisher.work_once()  # the first click's own edit, not its group line
    _drain(publisher)
    assert _updated(gateway) == [card.pending_id for card in clicked]
    deadline = time.monotonic() + 10
    while len(_updated(gateway)) == len(clicked) and time.monotonic() < deadline:
        time.sleep(0.1)
        _drain(publisher)
    # Its three changes (one member left, three times) made by one edit, once due.
    assert _updated(gateway) == [*[card.pending_id for card in clicked], "first"]


def test_a_pile_of_one_cards_group_lines_is_one_edit_and_none_is_lost(
    store: Database, gateway: FakeSlackGateway
) -> None:
    publisher = _publisher(store, gateway, delay_s=0.2)
    first = _posted(store, publisher, "first")
    gateway.calls.clear()
    # Thirty changes of the first card's line (one member joining or leaving each time).
    reasons = [f"group:joined:p-{n}" for n in range(30)]
    publisher.enqueue_group([GroupEdit(first, reason) for reason in reasons])
    time.sleep(0.25)
    _drain(publisher)
    assert _updated(gateway) == ["first"]
    with store.sql.read() as conn:
        rows = conn.execute(
            select(outbox.c.status, outbox.c.last_error).where(
                outbox.c.dedupe_key.like("update:first:%")
            )
        ).all()
    assert len(rows) == len(reasons)
    assert {status for status, _ in rows} == {"done"}  # none pending, none failed
    assert [error for _, error in rows].count("absorbed") == len(reasons) - 1

    # Answered itself, its line still counts those waiting in its thread: the same.
    gateway.calls.clear()
    answered = _answered(store, first)
    publisher.enqueue_group([GroupEdit(answered, f"group:left:q-{n}") for n in range(10)])
    time.sleep(0.25)
    _drain(publisher)
    assert _updated(gateway) == ["first"]


def test_writes_wait_for_the_urgent_work_in_flight_but_are_never_starved(
    store: Database, gateway: FakeSlackGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    urgency = Urgency()
    publisher = _publisher(store, gateway, urgency=urgency)
    other = _posted(store, publisher, "other")
    gateway.calls.clear()
    monkeypatch.setattr(publisher_module, "GROUP_LINE_YIELD_S", 30.0)
    publisher.enqueue_group([GroupEdit(other, "group:joined:x")])
    ack = urgency.begin()  # an interaction not acknowledged yet
    worker = threading.Thread(target=publisher.work_once)
    worker.start()
    time.sleep(0.2)
    assert _updated(gateway) == []  # the group line waits for the ack…
    ack.done()
    worker.join(timeout=10)  # …and goes once it left, long before its bound
    assert not worker.is_alive() and _updated(gateway) == ["other"]

    gateway.calls.clear()
    monkeypatch.setattr(publisher_module, "GROUP_LINE_YIELD_S", 0.3)
    publisher.enqueue_group([GroupEdit(other, "group:joined:y")])
    urgency.begin()  # urgent work that never ends: the line still goes, after its bound
    started = time.monotonic()
    publisher.work_once()
    assert _updated(gateway) == ["other"]
    assert time.monotonic() - started >= 0.3
