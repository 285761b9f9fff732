"""Follow-up claims: each step once, never for a resolved card, its writes enqueued with it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from kandev_slack.store import Database
from kandev_slack.store.cards.followups import NewCopy, OutboxRow
from tests.kit.factories import answered, record_card
from tests.kit.fakes import FakeClock


def reply(key: str) -> OutboxRow:
    return OutboxRow("reply", f"reply:{key}", {"pending_id": "p1", "key": key}, "C1")


def test_a_reminder_step_is_claimed_once_with_its_write(store: Database) -> None:
    record_card(store, "p1")
    store.cards.mark_posted("p1", "C1", "1.1")
    assert store.followups.advance_reminder("p1", 2, [reply("r2")])
    assert not store.followups.advance_reminder("p1", 2, [reply("r2-again")])
    assert not store.followups.advance_reminder(
        "p1", 1, [reply("r1")]
    )  # an earlier step is never sent
    assert store.followups.advance_reminder("p1", 3, [reply("r3")])
    keys = [item.key for item in store.outbox.outbox_take(None, 10, "w")]
    assert keys == ["reply:r2", "reply:r3"]
    (waiting,) = store.followups.waiting_posted()
    assert (waiting.card.pending_id, waiting.reminders_sent, waiting.escalated) == ("p1", 3, False)


def test_nothing_is_claimed_for_a_resolved_card(store: Database) -> None:
    record_card(store, "p1")
    store.cards.mark_posted("p1", "C1", "1.1")
    store.cards.transition("p1", answered("U1"))
    assert not store.followups.advance_reminder("p1", 1, [reply("r1")])
    message = NewCopy("escalation:p1", "escalation", "C0LEADS", "note")
    assert not store.followups.mark_escalated("p1", [message], [reply("e")])
    assert store.outbox.outbox_take(None, 10, "w") == []
    assert store.cards.message_get("escalation:p1") is None
    assert store.followups.waiting_posted() == []


def test_escalation_records_its_message_once(store: Database) -> None:
    record_card(store, "p1")
    store.cards.mark_posted("p1", "C1", "1.1")
    message = NewCopy("escalation:p1", "escalation", "C0LEADS", "note")
    assert store.followups.mark_escalated("p1", [message], [reply("e")])
    assert not store.followups.mark_escalated("p1", [message], [reply("e2")])
    copy = store.cards.message_get("escalation:p1")
    assert copy is not None and (copy.target, copy.note, copy.ts) == ("C0LEADS", "note", None)
    assert [item.key for item in store.outbox.outbox_take(None, 10, "w")] == ["reply:e"]


def test_concurrent_claims_of_one_step_have_one_winner(store: Database) -> None:
    record_card(store, "p1")
    store.cards.mark_posted("p1", "C1", "1.1")
    with ThreadPoolExecutor(8) as pool:
        won = list(
            pool.map(
                lambda i: store.followups.advance_reminder("p1", 1, [reply(f"r{i}")]), range(8)
            )
        )
    assert won.count(True) == 1
    assert len(store.outbox.outbox_take(None, 10, "w")) == 1


def test_the_database_clock_is_the_stores(store: Database, clock: FakeClock) -> None:
    assert store.followups.db_now() == clock()
