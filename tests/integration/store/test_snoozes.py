"""Snoozes in the store (SQLite and PostgreSQL): a snooze is set, changed and ended once per
snooze as read (its token), with its writes enqueued with it and none when it loses; it reads
back exactly as written; it holds until its end by the database's clock, and is found due then
— or at once when its item was resolved."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from kandev_slack.core.snooze import new_snooze
from kandev_slack.store import Database
from kandev_slack.store.cards.followups import OutboxRow
from tests.kit.factories import answered, record_card
from tests.kit.fakes import FakeClock

BOB = "U0BOB00002"


def edit(key: str) -> OutboxRow:
    return OutboxRow("update_copy", f"update:p1:pending:{key}", {"pending_id": "p1"}, "D1")


def test_a_snooze_reads_back_as_written_and_holds_until_its_end(
    store: Database, clock: FakeClock
) -> None:
    record_card(store, "p1")
    assert store.snoozes.next_end_s() is None  # nobody snoozes anything
    now = store.snoozes.snooze_now()
    snooze = new_snooze(BOB, "p1", 4, now, "t1")
    assert store.snoozes.put_snooze(snooze, None, [edit("s1")])
    assert store.snoozes.next_end_s() == 4 * 3600.0
    assert store.snoozes.snooze_of(BOB, "p1") == snooze
    assert store.snoozes.active_snooze(BOB, "p1") == snooze
    assert store.snoozes.snoozes_of(BOB) == [snooze]
    assert store.snoozes.snoozes_of("U0ANA00001") == []
    assert store.snoozes.due_snoozes() == []
    assert [i.key for i in store.outbox.outbox_take(None, 10, "w")] == ["update:p1:pending:s1"]

    clock.advance(4 * 3600 - 1)
    assert store.snoozes.active_snooze(BOB, "p1") == snooze
    clock.advance(1)
    assert store.snoozes.active_snooze(BOB, "p1") is None
    assert store.snoozes.snoozes_of(BOB) == []
    assert store.snoozes.due_snoozes() == [snooze]
    assert store.snoozes.next_end_s() == 0.0
    assert store.snoozes.snooze_of(BOB, "p1") == snooze  # ended, not yet woken


def test_people_setting_the_same_snooze_as_read_have_one_winner(store: Database) -> None:
    record_card(store, "p1")
    now = store.snoozes.snooze_now()

    def first(i: int) -> bool:
        return store.snoozes.put_snooze(
            new_snooze(BOB, "p1", 1, now, f"t{i}"), None, [edit(f"{i}")]
        )

    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(first, range(8)))
    assert won.count(True) == 1
    assert len(store.outbox.outbox_take(None, 10, "w")) == 1
    read = store.snoozes.snooze_of(BOB, "p1")
    assert read is not None and read.token == f"t{won.index(True)}"

    def change(i: int) -> bool:
        longer = new_snooze(BOB, "p1", 24, now, f"c{i}")
        return store.snoozes.put_snooze(longer, read.token, [edit(f"c{i}")])

    with ThreadPoolExecutor(8) as pool:
        changed = list(pool.map(change, range(8)))
    assert changed.count(True) == 1
    now_read = store.snoozes.snooze_of(BOB, "p1")
    assert now_read is not None and now_read.hours == 24
    assert not store.snoozes.put_snooze(new_snooze(BOB, "p1", 4, now, "late"), read.token, [])


def test_a_snooze_ends_once_with_its_writes(store: Database, clock: FakeClock) -> None:
    record_card(store, "p1")
    snooze = new_snooze(BOB, "p1", 1, store.snoozes.snooze_now(), "t1")
    assert store.snoozes.put_snooze(snooze, None, [])
    clock.advance(3600)

    def end(i: int) -> bool:
        return store.snoozes.end_snooze(BOB, "p1", "t1", [edit(f"wake{i}")])

    with ThreadPoolExecutor(8) as pool:
        ended = list(pool.map(end, range(8)))
    assert ended.count(True) == 1
    assert len(store.outbox.outbox_take(None, 10, "w")) == 1
    assert store.snoozes.snooze_of(BOB, "p1") is None
    assert store.snoozes.due_snoozes() == []
    assert not store.snoozes.end_snooze(BOB, "p1", "t1", [edit("again")])


def test_a_resolved_item_s_snooze_is_due_at_once(store: Database) -> None:
    record_card(store, "p1")
    record_card(store, "p2")
    now = store.snoozes.snooze_now()
    kept = new_snooze(BOB, "p2", 24, now, "t2")
    gone = new_snooze(BOB, "p1", 24, now, "t1")
    assert store.snoozes.put_snooze(gone, None, [])
    assert store.snoozes.put_snooze(kept, None, [])
    store.cards.transition("p1", answered("U1"))
    assert store.snoozes.due_snoozes() == [gone]
    assert store.snoozes.snoozes_of(BOB)[0].until - now == timedelta(hours=24)
