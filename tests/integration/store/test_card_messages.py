"""A bundle's other messages: recorded once by key, found by (channel, ts) like the channel
card, listed for the edits of a resolution, purged with their card."""

from __future__ import annotations

from datetime import timedelta

from kandev_slack.store import Database
from tests.kit.factories import answered, record_card
from tests.kit.fakes import FakeClock


def test_a_message_is_recorded_once_and_found_by_its_channel_and_ts(store: Database) -> None:
    record_card(store, "p1")
    store.cards.mark_posted("p1", "C1", "1.1")
    assert store.cards.message_add("escalation:p1", "p1", "escalation", "C0LEADS", note="waited")
    assert not store.cards.message_add("escalation:p1", "p1", "escalation", "C0OTHER")
    assert store.cards.message_add("dm:p1:U1", "p1", "dm", "U1")
    assert store.cards.by_any_message("C0LEADS", "2.2") is None

    assert store.cards.message_opened("dm:p1:U1", "D1")
    assert store.cards.message_posted("escalation:p1", "C0LEADS", "2.2")
    assert store.cards.message_posted("dm:p1:U1", "D1", "3.3")
    assert not store.cards.message_opened("dm:p1:U1", "D2")  # posted: its conversation is fixed

    for channel, ts in (("C1", "1.1"), ("C0LEADS", "2.2"), ("D1", "3.3")):
        found = store.cards.by_any_message(channel, ts)
        assert found is not None and found.pending_id == "p1", (channel, ts)
    assert store.cards.by_message("C0LEADS", "2.2") is None  # the channel card alone
    assert store.cards.by_any_message("C1", "2.2") is None
    listed = store.cards.messages_of("p1")  # same clock reading: in key order
    assert [(m.key, m.channel, m.ts, m.note) for m in listed] == [
        ("dm:p1:U1", "D1", "3.3", ""),
        ("escalation:p1", "C0LEADS", "2.2", "waited"),
    ]


def test_purge_removes_the_messages_of_purged_cards_only(store: Database, clock: FakeClock) -> None:
    record_card(store, "old")
    store.cards.message_add("escalation:old", "old", "escalation", "C0LEADS")
    store.cards.transition("old", answered("U1"))
    record_card(store, "waiting")
    store.cards.message_add("escalation:waiting", "waiting", "escalation", "C0LEADS")
    clock.advance(100 * 24 * 3600)
    store.retention.purge(timedelta(days=90))
    assert store.cards.message_get("escalation:old") is None
    assert store.cards.message_get("escalation:waiting") is not None
