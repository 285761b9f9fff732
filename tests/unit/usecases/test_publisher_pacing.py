"""Replicas' publishers share each channel's posting pace through the store: two publishers (as
two replicas: each its own store on one database file, whose clock the test moves) never post to
one channel in the same second, whichever of them took which post, and the posts a replica left
waiting when it died go out at their slots from the other one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kandev_slack.core.domain import Card, NewCard, TaskInfo
from kandev_slack.ops.health import Health
from kandev_slack.store import CardsRepository, Database
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.wiring import build_publisher
from tests.kit.factories import CHANNEL, KANDEV_URL, make_bundle
from tests.kit.fakes import FakeClock, FakeSlackGateway


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))


@pytest.fixture
def stores(tmp_path: Path, clock: FakeClock) -> Iterator[list[Database]]:
    opened = [Database(f"sqlite:///{tmp_path / 'bot.db'}", clock=clock) for _ in range(2)]
    yield opened
    for store in opened:
        store.close()


@pytest.fixture
def gateway() -> FakeSlackGateway:
    return FakeSlackGateway()


@pytest.fixture
def replicas(stores: list[Database], gateway: FakeSlackGateway) -> list[Publisher]:
    return [
        build_publisher(
            store.outbox,
            store.cards,
            store.audit_log,
            gateway,
            kandev_url=KANDEV_URL,
            health=Health(),
            post_spacing_s=1.0,
        )
        for store in stores
    ]


def enqueue(publisher: Publisher, names: list[str]) -> None:
    for name in names:
        bundle = make_bundle(pending_id=name, task_id=f"t-{name}")
        cards = publisher.cards  # the replica's own store's
        assert isinstance(cards, CardsRepository)
        assert cards.record_card(
            NewCard(bundle, TaskInfo(task_id=bundle.task_id, title=name), CHANNEL)
        )
        card = cards.get(name)
        assert isinstance(card, Card)
        publisher.enqueue_post(card)


def posts(gateway: FakeSlackGateway) -> list[str]:
    return [c.params["pending_id"] for c in gateway.calls if c.method == "chat.postMessage"]


def test_two_replicas_with_posts_queued_for_one_channel_post_one_a_second(
    replicas: list[Publisher], gateway: FakeSlackGateway, clock: FakeClock
) -> None:
    a, b = replicas
    enqueue(a, ["a1", "a2", "a3"])
    assert a.work_once()  # a1 goes; a2, a3 wait for their slots
    enqueue(b, ["b1", "b2", "b3"])
    assert b.work_once()  # b's posts queue behind a's: none goes this second
    per_second: list[list[str]] = [posts(gateway)]
    for second in range(1, 8):
        clock.advance(1.0)
        before = len(posts(gateway))
        for replica in replicas if second % 2 else replicas[::-1]:
            while replica.work_once():
                pass
        per_second.append(posts(gateway)[before:])
    assert [len(s) for s in per_second] == [1, 1, 1, 1, 1, 1, 0, 0], per_second
    assert Counter(posts(gateway)) == Counter(["a1", "a2", "a3", "b1", "b2", "b3"])
    assert [p[0] for p in posts(gateway)] == ["a", "a", "a", "b", "b", "b"]  # first come


def test_the_posts_a_dead_replica_left_waiting_go_out_at_their_slots(
    replicas: list[Publisher], gateway: FakeSlackGateway, clock: FakeClock
) -> None:
    dead, alive = replicas
    enqueue(dead, [f"p{n}" for n in range(4)])
    assert dead.work_once()  # p0 goes, p1..p3 get their slots; then this replica dies
    for _ in range(3):
        clock.advance(1.0)
        before = len(posts(gateway))
        while alive.work_once():
            pass
        assert len(posts(gateway)) == before + 1  # one each second, none lost, none blocked
    assert posts(gateway) == ["p0", "p1", "p2", "p3"]


def drain(publisher: Publisher) -> None:
    while publisher.work_once():
        pass


def test_after_the_clock_steps_back_an_hour_a_new_card_waits_one_interval_at_most(
    replicas: list[Publisher], gateway: FakeSlackGateway, clock: FakeClock
) -> None:
    a, _ = replicas
    enqueue(a, ["p1"])
    drain(a)
    assert posts(gateway) == ["p1"]
    clock.advance(-3600)  # the clock steps back an hour (NTP, a VM restored)
    enqueue(a, ["p2"])
    drain(a)
    clock.advance(1.0)  # one interval (post_spacing_s)
    drain(a)
    assert posts(gateway) == ["p1", "p2"]


def test_after_the_clock_steps_back_the_waiting_posts_keep_one_a_second(
    replicas: list[Publisher], gateway: FakeSlackGateway, clock: FakeClock
) -> None:
    a, b = replicas
    enqueue(a, ["p1", "p2", "p3"])
    drain(a)  # p1 goes; p2, p3 were given their slots (in the time before the step)
    clock.advance(-3600)
    enqueue(b, ["p4"])
    per_second: list[list[str]] = []
    for _ in range(4):
        before = len(posts(gateway))
        drain(a)
        drain(b)
        per_second.append(posts(gateway)[before:])
        clock.advance(1.0)
    assert posts(gateway)[0] == "p1"
    assert sorted(posts(gateway)) == ["p1", "p2", "p3", "p4"], per_second  # none waits an hour
    assert all(len(second) <= 1 for second in per_second), per_second  # still one a second


def test_a_post_whose_slot_came_keeps_it_a_moment_while_the_pace_row_is_locked() -> None:
    from datetime import timedelta

    from kandev_slack.usecases.outbox.pacing import (
        LOCKED_RETRY_S,
        LOCKED_WAIT_S,
        POST_SPACING_S,
        Pacer,
    )

    pacer = Pacer(outbox=None, health=Health(), spacing_s=POST_SPACING_S)  # type: ignore[arg-type]
    now = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)
    slot = now - timedelta(seconds=0.05)  # it came a moment ago
    assert pacer.locked_wait(slot, now) == (LOCKED_RETRY_S, slot)
    # held so long that the slot is stale (a frozen holder): it waits and queues again
    assert pacer.locked_wait(now - timedelta(seconds=5), now) == (LOCKED_WAIT_S, None)
    assert pacer.locked_wait(None, now) == (LOCKED_WAIT_S, None)  # no slot held
