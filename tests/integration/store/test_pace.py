"""Posting slots per channel shared by replicas (store/pace.py), on SQLite and PostgreSQL: slots
are distinct and spaced, card posts go before copies and replies, a slot whose holder died
blocks nothing, a 429 holds every replica off. Asserted on the slots, never on wall time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta

from kandev_slack.store import Database
from kandev_slack.store.queues.pace import STALE_SLOT_S, Pace, PaceBusy, Turn
from tests.kit.fakes import FakeClock

SPACING = 1.0
TOLERANCE = 0.125
CHANNEL = "C0PACE"


def turn(store: Database, *, follow: bool = False, held=None, channel: str = CHANNEL) -> Turn:
    return store.outbox.pace_turn(channel, follow=follow, held=held, pace=Pace(SPACING, TOLERANCE))


def s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def test_a_backlog_gets_one_slot_a_second_and_each_goes_at_its_slot(
    store: Database, clock: FakeClock
) -> None:
    start = clock.now
    first, *waiting = [turn(store) for _ in range(4)]
    assert first.go and first.at == start
    assert [t.go for t in waiting] == [False] * 3
    assert [t.at - start for t in waiting] == [s(1), s(2), s(3)]
    assert [t.wait_s for t in waiting] == [1.0, 2.0, 3.0]
    # Each comes back at its slot (as the outbox hands it back then) and goes.
    for n, held in enumerate(t.at for t in waiting):
        clock.now = held
        assert turn(store, held=held).go, n
    # Another channel has a pace of its own.
    assert turn(store, channel="C0OTHER").go


def test_a_post_at_its_slot_waits_for_the_gate_when_the_one_before_went_late(
    store: Database, clock: FakeClock
) -> None:
    start = clock.now
    assert turn(store).go
    second, third = turn(store), turn(store)
    clock.now = second.at + s(0.6)  # sent late (a busy replica)
    assert turn(store, held=second.at).go
    clock.now = third.at  # on time: 0.4 s after the late one, too soon
    early = turn(store, held=third.at)
    assert not early.go
    assert early.at == start + s(1.6 + SPACING - TOLERANCE)  # the gate's moment
    clock.now = early.at
    assert turn(store, held=early.at).go  # it kept its place


def test_concurrent_reservations_get_distinct_slots_spaced_apart(
    open_store: Callable[..., Database],
) -> None:
    # Replicas: each thread has its own store (engine, connections); the database's clock.
    stores = [open_store() for _ in range(6)]
    spacing = 30.0  # far longer than the test takes: only the first may go at once
    turns: list[Turn] = []
    lock = threading.Lock()
    go = threading.Barrier(len(stores))

    def reserve(store: Database) -> None:
        go.wait(timeout=30)
        taken = 0
        while taken < 5:
            try:
                t = store.outbox.pace_turn(CHANNEL, follow=False, held=None, pace=Pace(spacing, 0))
            except PaceBusy:  # another replica holds the row now: the item is tried again
                time.sleep(0.005)
                continue
            taken += 1
            with lock:
                turns.append(t)

    threads = [threading.Thread(target=reserve, args=(st,)) for st in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(turns) == 30
    assert sum(t.go for t in turns) == 1
    slots = sorted(t.at for t in turns)
    assert [b - a for a, b in zip(slots, slots[1:], strict=False)] == [s(spacing)] * 29


def test_card_posts_go_before_copies_and_replies_queued_earlier(
    store: Database, clock: FakeClock
) -> None:
    start = clock.now
    assert turn(store).go  # a card post
    replies = [turn(store, follow=True) for _ in range(2)]
    assert [r.at - start for r in replies] == [s(1), s(2)]  # behind the cards, none waiting
    cards = [turn(store) for _ in range(2)]  # new cards: they take the next slots
    assert [c.at - start for c in cards] == [s(1), s(2)]
    for n, card in enumerate(cards):
        clock.now = card.at
        assert turn(store, held=card.at).go, n
    # The first reply's slot was taken by a card: it queues again, after them.
    again = turn(store, follow=True, held=replies[0].at)
    assert not again.go and again.at == start + s(3)
    clock.now = again.at
    assert turn(store, follow=True, held=again.at).go


def test_a_slot_whose_holder_died_blocks_nothing(store: Database, clock: FakeClock) -> None:
    start = clock.now
    assert turn(store).go
    lost = turn(store)  # reserved by a replica that dies before its slot comes
    kept = turn(store)
    clock.now = kept.at  # the lost slot passed unused
    assert turn(store, held=kept.at).go
    # The dead replica's item, taken over long after its slot, queues again.
    clock.advance(STALE_SLOT_S + 10)
    late = turn(store, held=lost.at)
    assert late.go and late.at == clock.now
    assert lost.at == start + s(1)


def test_a_rate_limit_holds_every_replica_off(store: Database, clock: FakeClock) -> None:
    assert turn(store).go
    clock.advance(5)
    store.outbox.pace_block(CHANNEL, 3.0, tolerance_s=TOLERANCE)
    blocked = turn(store)
    assert not blocked.go and blocked.wait_s == 3.0
    clock.now = blocked.at
    assert turn(store, held=blocked.at).go


def test_an_outbox_item_keeps_its_slot_only_when_deferred_to_it(
    store: Database, clock: FakeClock
) -> None:
    entry_id = store.outbox.outbox_put("post", "post:p1", {"pending_id": "p1"}, channel=CHANNEL)
    assert entry_id is not None
    assert store.outbox.outbox_next_due_s() == 0.0
    [item] = store.outbox.outbox_take(None, 10, "w1")
    assert item.slot_at is None
    assert store.outbox.outbox_next_due_s() is None  # leased: nothing else waits
    # ... but a take finds it once its lease runs out (its worker died)
    assert store.outbox.outbox_next_due_s(leased=True) == 30.0
    slot = clock.now + s(3)
    assert store.outbox.outbox_retry(entry_id, slot, "paced", slot=True)
    assert store.outbox.outbox_next_due_s() == 3.0
    clock.now = slot
    [item] = store.outbox.outbox_take(None, 10, "w2")
    assert item.slot_at == slot
    assert store.outbox.outbox_retry(
        entry_id, 2.0, "ratelimited"
    )  # any other wait gives the slot up
    clock.advance(2)
    [item] = store.outbox.outbox_take(None, 10, "w2")
    assert item.slot_at is None


def test_a_clock_stepped_back_never_makes_a_wait_longer_than_its_interval(
    store: Database, clock: FakeClock
) -> None:
    assert turn(store).go
    held = turn(store)  # the next post's slot, one interval on
    assert not held.go and held.wait_s == SPACING
    clock.advance(-3600)  # the database's clock steps back an hour
    new = turn(store)
    assert new.wait_s <= SPACING  # the next slot of the gate, not an hour and a second
    again = turn(store, held=held.at)  # the slot given before the step is given up
    assert again.wait_s <= 2 * SPACING  # it queues anew, behind the new one
    assert len({new.at, again.at}) == 2  # still distinct slots
    clock.now = max(new.at, again.at)
    assert turn(store, held=max(new.at, again.at)).go


def test_after_a_step_back_the_gate_and_a_rate_limit_are_kept_in_the_new_time(
    store: Database, clock: FakeClock
) -> None:
    assert turn(store).go
    clock.advance(-3600)
    first = turn(store)
    assert first.wait_s <= SPACING  # the gate moved back with the clock, not a whole hour
    store.outbox.pace_block(CHANNEL, 5.0, tolerance_s=TOLERANCE)
    blocked = turn(store)
    assert SPACING < blocked.wait_s <= 5.0 + 2 * SPACING


def test_an_item_given_back_before_the_clock_stepped_back_is_due(
    store: Database, clock: FakeClock
) -> None:
    entry_id = store.outbox.outbox_put("post", "post:p9", {"pending_id": "p9"}, channel=CHANNEL)
    assert entry_id is not None
    [item] = store.outbox.outbox_take(None, 10, "w1")
    assert store.outbox.outbox_retry(entry_id, 2.0, "paced", worker_id="w1")
    clock.advance(-3600)
    assert store.outbox.outbox_next_due_s() == 0.0  # not in an hour and two seconds
    [again] = store.outbox.outbox_take(None, 10, "w2")
    assert again.id == entry_id
