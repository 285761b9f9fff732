"""The outbox: dedupe keys, due times, leases exclusive between workers, retry and done."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import pytest

from kandev_slack.store import Database, OutboxStatus
from tests.kit.fakes import FakeClock


def test_put_and_dedupe(store: Database, clock: FakeClock) -> None:
    first = store.outbox.outbox_put("update", "edit:p1:answered", {"ts": "1.1"}, channel="C1")
    assert isinstance(first, int)
    assert (
        store.outbox.outbox_put("update", "edit:p1:answered", {"ts": "1.1"}, channel="C1") is None
    )
    assert (
        store.outbox.outbox_put("update", "edit:p1:ended", {"ts": "1.1"}, channel="C1") is not None
    )
    anonymous = [store.outbox.outbox_put("ephemeral", None, {"n": n}) for n in range(2)]
    assert None not in anonymous  # no key, no dedupe
    assert store.outbox.outbox_pending_count() == 4
    item = store.outbox.outbox_get(first)
    assert item is not None
    assert (item.kind, item.key, item.channel, item.payload) == (
        "update",
        "edit:p1:answered",
        "C1",
        {"ts": "1.1"},
    )
    assert (item.status, item.attempts, item.not_before) == (OutboxStatus.PENDING, 0, clock.now)


def test_key_stays_taken_after_done_until_purged(store: Database, clock: FakeClock) -> None:
    entry_id = store.outbox.outbox_put("update", "k", {})
    assert entry_id is not None
    store.outbox.outbox_take(None, 10, "w1")
    assert store.outbox.outbox_done(entry_id)
    assert store.outbox.outbox_put("update", "k", {}) is None
    clock.advance(3600)
    assert store.outbox.outbox_purge(older_than_s=60) == 1
    assert store.outbox.outbox_get(entry_id) is None
    assert store.outbox.outbox_put("update", "k", {}) is not None


def test_take_only_due_items_in_order(store: Database, clock: FakeClock) -> None:
    now = clock.now
    later = store.outbox.outbox_put("post", "later", {}, not_before=now + timedelta(seconds=5))
    second = store.outbox.outbox_put("post", "second", {}, not_before=now - timedelta(seconds=1))
    first = store.outbox.outbox_put("post", "first", {}, not_before=now - timedelta(seconds=2))
    taken = store.outbox.outbox_take(now, 10, "w1", lease_s=60)
    assert [i.id for i in taken] == [first, second]
    assert all(i.lease_owner == "w1" and i.attempts == 1 for i in taken)
    assert taken[0].lease_until == now + timedelta(seconds=60)
    assert [i.id for i in store.outbox.outbox_take(now + timedelta(seconds=5), 10, "w1")] == [later]


def test_limit_and_kinds(store: Database) -> None:
    for n in range(3):
        store.outbox.outbox_put("post", f"post{n}", {})
    store.outbox.outbox_put("update", "update0", {})
    assert [i.kind for i in store.outbox.outbox_take(None, 10, "w1", kinds=["update"])] == [
        "update"
    ]
    assert len(store.outbox.outbox_take(None, 2, "w1")) == 2
    assert len(store.outbox.outbox_take(None, 2, "w1")) == 1


def test_a_lease_excludes_other_workers_until_it_expires(store: Database, clock: FakeClock) -> None:
    entry_id = store.outbox.outbox_put("post", "k", {"text": "hi"})
    now = clock.now
    [mine] = store.outbox.outbox_take(now, 10, "w1", lease_s=30)
    assert mine.id == entry_id
    assert store.outbox.outbox_take(now + timedelta(seconds=29), 10, "w2") == []
    [theirs] = store.outbox.outbox_take(now + timedelta(seconds=30), 10, "w2", lease_s=30)
    assert (theirs.id, theirs.lease_owner, theirs.attempts) == (entry_id, "w2", 2)
    assert store.outbox.outbox_pending_count() == 1


def test_retry_gives_the_lease_back_with_a_delay(store: Database, clock: FakeClock) -> None:
    entry_id = store.outbox.outbox_put("post", "k", {})
    assert entry_id is not None
    now = clock.now
    store.outbox.outbox_take(now, 10, "w1", lease_s=300)
    retry_at = now + timedelta(seconds=7)  # e.g. Retry-After: 7
    assert store.outbox.outbox_retry(entry_id, retry_at, "ratelimited")
    item = store.outbox.outbox_get(entry_id)
    assert item is not None
    assert (item.not_before, item.lease_owner, item.lease_until, item.last_error) == (
        retry_at,
        None,
        None,
        "ratelimited",
    )
    assert store.outbox.outbox_take(now + timedelta(seconds=6), 10, "w2") == []
    assert [i.id for i in store.outbox.outbox_take(retry_at, 10, "w2")] == [entry_id]


def test_done_and_failed_items_are_finished(store: Database, clock: FakeClock) -> None:
    done_id = store.outbox.outbox_put("post", "a", {})
    failed_id = store.outbox.outbox_put("post", "b", {})
    assert done_id is not None and failed_id is not None
    store.outbox.outbox_take(None, 10, "w1")
    assert store.outbox.outbox_done(done_id)
    assert store.outbox.outbox_fail(failed_id, "channel_not_found")
    assert not store.outbox.outbox_done(done_id)
    assert not store.outbox.outbox_retry(failed_id, clock.now, "again")
    assert store.outbox.outbox_pending_count() == 0
    assert store.outbox.outbox_take(clock.now + timedelta(days=1), 10, "w1") == []
    failed = store.outbox.outbox_get(failed_id)
    assert failed is not None
    assert (failed.status, failed.last_error, failed.finished_at) == (
        OutboxStatus.FAILED,
        "channel_not_found",
        clock.now,
    )
    assert store.outbox.outbox_get(done_id).status is OutboxStatus.DONE  # type: ignore[union-attr]


def test_naive_datetimes_are_refused(store: Database) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        store.outbox.outbox_put("post", "k", {}, not_before=datetime(2030, 1, 1))
    with pytest.raises(ValueError, match="timezone-aware"):
        store.outbox.outbox_take(datetime(2030, 1, 1), 1, "w1")


def test_two_workers_never_take_the_same_item(open_store: Callable[..., Database]) -> None:
    """Two replicas (separate engines) draining one outbox concurrently."""
    producer = open_store()
    ids = {producer.outbox.outbox_put("post", f"k{n}", {"n": n}) for n in range(60)}
    workers = {"w1": open_store(), "w2": open_store()}

    def drain(name: str) -> list[int]:
        taken: list[int] = []
        while batch := workers[name].outbox.outbox_take(None, 3, name, lease_s=300):
            for item in batch:
                assert item.lease_owner == name
                taken.append(item.id)
                workers[name].outbox.outbox_done(item.id)
        return taken

    with ThreadPoolExecutor(2) as pool:
        w1, w2 = pool.map(drain, ["w1", "w2"])
    assert not set(w1) & set(w2)
    assert sorted(w1 + w2) == sorted(ids)  # type: ignore[type-var]
    assert producer.outbox.outbox_pending_count() == 0


def test_without_a_clock_leases_and_due_times_are_the_databases(
    open_store: Callable[..., Database],
) -> None:
    store = open_store()  # no clock: every time comes from the database, in the statement
    entry_id = store.outbox.outbox_put("post", "k", {})
    assert entry_id is not None
    [item] = store.outbox.outbox_take(None, 10, "w1", lease_s=30)
    assert item.lease_until is not None
    assert item.lease_until - item.updated_at == timedelta(seconds=30)
    assert store.outbox.outbox_take(None, 10, "w2") == []
    assert store.outbox.outbox_renew("w1", 600) == 1
    assert store.outbox.outbox_retry(entry_id, 0.0, "paced")  # due again at once
    [again] = store.outbox.outbox_take(None, 10, "w2", lease_s=30)
    assert (again.id, again.attempts, again.lease_owner) == (entry_id, 2, "w2")
    assert store.outbox.outbox_retry(entry_id, 3600.0, "ratelimited")  # Retry-After: an hour
    assert store.outbox.outbox_take(None, 10, "w3") == []
    waiting = store.outbox.outbox_get(entry_id)
    assert waiting is not None
    assert waiting.not_before - waiting.updated_at == timedelta(seconds=3600)


def test_failed_items_are_counted_and_a_give_back_respects_the_lease(
    store: Database, clock: FakeClock
) -> None:
    ids = [store.outbox.outbox_put("post", f"k{n}", {}) for n in range(3)]
    store.outbox.outbox_take(None, 10, "w1", lease_s=7200)  # still w1's after the hour below
    assert store.outbox.outbox_fail(ids[0], "chat.postMessage: invalid_blocks")
    assert store.outbox.outbox_failed_count() == 1
    clock.advance(3600)
    assert store.outbox.outbox_fail(ids[1], "error: ValidationError")
    assert store.outbox.outbox_failed_count() == 2
    assert store.outbox.outbox_failed_count(within_s=600) == 1  # only the recent one
    assert not store.outbox.outbox_retry(ids[2], 0.0, "interrupted", worker_id="w2")  # not w2's
    assert store.outbox.outbox_retry(ids[2], 5.0, "interrupted", worker_id="w1")
    item = store.outbox.outbox_get(ids[2])
    assert item is not None
    assert (item.lease_owner, item.not_before, item.last_error) == (
        None,
        clock.now + timedelta(seconds=5),
        "interrupted",
    )


def test_a_retry_keeps_the_slot_it_holds_or_gives_it_up(store: Database, clock: FakeClock) -> None:
    slot = clock.now + timedelta(seconds=1)
    entry_id = store.outbox.outbox_put("post", "card", {}, channel="C1")
    assert entry_id is not None
    store.outbox.outbox_take(None, 10, "w1")
    assert store.outbox.outbox_retry(entry_id, slot, "paced", worker_id="w1", slot=True)
    clock.advance(1)
    store.outbox.outbox_take(None, 10, "w1")
    # its slot came, its channel's pace row was locked: it keeps the slot a moment longer
    assert store.outbox.outbox_retry(entry_id, 0.1, "paced", worker_id="w1", holding=slot)
    kept = store.outbox.outbox_get(entry_id)
    assert kept is not None
    assert (kept.slot_at, kept.not_before) == (slot, clock.now + timedelta(seconds=0.1))
    clock.advance(1)
    store.outbox.outbox_take(None, 10, "w1")
    assert store.outbox.outbox_retry(entry_id, 1.0, "paced", worker_id="w1")  # given up
    given_up = store.outbox.outbox_get(entry_id)
    assert given_up is not None and given_up.slot_at is None
