"""A bundle older than the process, new to its database (the file was deleted, or restored from
a backup): its card is looked for in Slack before it is posted, as after a crash, and adopted
when it is there; posted when it is not, or when Slack refuses the search for good (said)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kandev_slack.core.domain import Card
from kandev_slack.slack_api.gateway import Message
from kandev_slack.store import Database
from kandev_slack.usecases.outbox.publisher import Publisher
from tests.kit.factories import ASKED_AT, make_bundle, record_card
from tests.kit.fakes import FakeSlackGateway

STARTED = ASKED_AT + timedelta(hours=1)  # the bundle was asked before this process started


@pytest.fixture
def restarted(publisher: Publisher) -> Publisher:
    """The publisher of a process started after the bundle was asked."""
    publisher.writes.forgotten.started_at = STARTED
    return publisher


def _enqueue(store: Database, publisher: Publisher, pending_id: str) -> Card:
    assert record_card(store, pending_id)
    card = store.cards.get(pending_id)
    assert card is not None
    publisher.enqueue_post(card)
    return card


def _posts(gateway: FakeSlackGateway) -> list[str]:
    return [c.params["pending_id"] for c in gateway.calls if c.method == "chat.postMessage"]


def test_a_card_slack_shows_already_is_adopted_not_posted_again(
    store: Database, restarted: Publisher, gateway: FakeSlackGateway
) -> None:
    # posted by the process whose database was lost, seconds after the bundle was asked
    earlier = f"{(ASKED_AT + timedelta(seconds=2)).timestamp():.6f}"
    gateway.cards[("C1", earlier)] = (Message(text="card", blocks=[]), "p1")
    _enqueue(store, restarted, "p1")

    while restarted.work_once():
        pass

    assert _posts(gateway) == []
    card = store.cards.get("p1")
    assert card is not None and card.ts == earlier
    assert [e.result for e in store.audit_log.audit_entries("p1")] == ["adopted"]


def test_cards_slack_does_not_show_are_posted_after_one_look_at_their_channel(
    store: Database, restarted: Publisher, gateway: FakeSlackGateway
) -> None:
    for pending_id in ("p1", "p2", "p3"):
        _enqueue(store, restarted, pending_id)
    while restarted.work_once():
        pass
    assert sorted(_posts(gateway)) == ["p1", "p2", "p3"]
    assert len(gateway.called("conversations.history")) == 1  # one scan for all three


def test_a_search_slack_refuses_for_good_is_said_and_the_card_posted(
    store: Database, restarted: Publisher, gateway: FakeSlackGateway, caplog
) -> None:
    gateway.fail("conversations.history", "missing_scope")
    _enqueue(store, restarted, "p1")
    while restarted.work_once():
        pass
    assert _posts(gateway) == ["p1"]
    assert "cannot look for an earlier card of p1: missing_scope" in caplog.text


def test_a_bundle_asked_after_the_start_is_posted_without_a_look(
    store: Database, restarted: Publisher, gateway: FakeSlackGateway
) -> None:
    bundle = make_bundle(pending_id="p2", created_at=STARTED + timedelta(minutes=5))
    assert record_card(store, "p2", created_at=bundle.created_at)
    card = store.cards.get("p2")
    assert card is not None
    restarted.enqueue_post(card)
    while restarted.work_once():
        pass
    assert _posts(gateway) == ["p2"]
    assert gateway.called("conversations.history") == []
