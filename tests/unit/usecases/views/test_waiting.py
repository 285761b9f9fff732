"""WaitingQueue: Kandev's active list joined with the bot's cards, and who may see what."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.domain import CardState
from kandev_slack.kandev.errors import KandevNotFoundError, KandevUnavailable
from kandev_slack.store import Database
from kandev_slack.usecases.views.waiting import WaitingQueue
from tests.kit.factories import ALICE_ID, CHANNEL, numbered_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway

BOB_ID = "U0BOB00002"
DATA_CHANNEL = "C0DATA"


@pytest.fixture
def routing() -> Routing:
    """Platform's questions are Alice's (in the default channel), Data's are Bob's."""
    rules = (
        RouteRule(workspace="Platform", channel=None, answerers=frozenset({ALICE_ID}), line=1),
        RouteRule(workspace="Data", channel=DATA_CHANNEL, answerers=frozenset({BOB_ID}), line=2),
    )
    return Routing(default_channel=CHANNEL, rules=rules)


@pytest.fixture
def listed(fake_kandev: FakeKandev):
    """Bundle 1 of Platform, bundle 2 of Data, both active in Kandev (not posted)."""
    platform = fake_kandev.add(numbered_bundle(1), title="Platform task", workspace_name="Platform")
    data = fake_kandev.add(
        numbered_bundle(2), title="Data task", workspace_id="ws-2", workspace_name="Data"
    )
    return platform, data


def test_waiting_lists_kandevs_bundles_with_their_tasks_and_shows_their_cards(
    posted, queue: WaitingQueue, fake_kandev: FakeKandev
) -> None:
    card = posted(numbered_bundle(1))
    fake_kandev.add(
        numbered_bundle(2), title="Data task", workspace_id="ws-2", workspace_name="Data"
    )

    items = queue.shown(queue.waiting())

    assert [i.bundle.pending_id for i in items] == ["pending-001", "pending-002"]
    assert items[0].card is not None and items[0].card.ts == card.ts
    assert items[1].card is None and items[1].task.workspace_name == "Data"


def test_each_person_sees_only_what_they_may_answer(queue: WaitingQueue, listed) -> None:
    items = queue.waiting()

    assert [i.task.title for i in queue.visible_to(ALICE_ID, items)] == ["Platform task"]
    assert [i.task.title for i in queue.visible_to(BOB_ID, items)] == ["Data task"]
    assert queue.visible_to("U0STRANGER", items) == []


def test_a_bundle_whose_task_cannot_be_read_is_left_out(
    queue: WaitingQueue, fake_kandev: FakeKandev, listed
) -> None:
    _platform, data = listed
    del fake_kandev.tasks[data.task_id]

    assert [i.bundle.pending_id for i in queue.waiting()] == ["pending-001"]


def test_kandev_unreachable_is_raised_not_hidden(
    queue: WaitingQueue, fake_kandev: FakeKandev, listed
) -> None:
    fake_kandev.fail("list_listed")

    with pytest.raises(KandevUnavailable):
        queue.waiting()


def test_card_for_a_listed_bundle_not_posted_is_built_for_its_route(
    queue: WaitingQueue, store: Database, listed
) -> None:
    _platform, data = listed

    card = queue.card_for(data.pending_id)

    assert card is not None
    assert (card.pending_id, card.channel, card.ts) == (data.pending_id, DATA_CHANNEL, None)
    assert card.state is CardState.PENDING and card.task.title == "Data task"
    assert card.bundle == data
    assert store.cards.get(data.pending_id) is None  # built, not stored


def test_card_for_prefers_the_stored_card(posted, queue: WaitingQueue) -> None:
    card = posted(numbered_bundle(3))

    assert queue.card_for(card.pending_id) == card


def test_card_for_is_none_when_neither_knows_it_or_its_task_cannot_be_read(
    queue: WaitingQueue, fake_kandev: FakeKandev, listed
) -> None:
    platform, _data = listed
    assert queue.card_for("pending-404") is None

    fake_kandev.fail("task", KandevNotFoundError("NOT_FOUND", "hidden"))
    assert queue.card_for(platform.pending_id) is None  # no route known: nobody may answer
    fake_kandev.recover()
    fake_kandev.fail("list_pending")
    assert queue.card_for(platform.pending_id) is None


def test_posted_pending_is_what_the_bot_last_knew(
    posted, queue: WaitingQueue, store: Database
) -> None:
    card = posted(numbered_bundle(1))

    [item] = queue.posted_pending()

    assert item.bundle.pending_id == card.pending_id and item.card == card


def test_permalinks_are_asked_once_per_message(
    posted, queue: WaitingQueue, gateway: FakeSlackGateway
) -> None:
    card = posted(numbered_bundle(1))

    first = queue.shown(queue.waiting())
    again = queue.shown(queue.waiting())

    assert first[0].permalink == again[0].permalink
    assert first[0].permalink is not None and card.ts.replace(".", "") in first[0].permalink  # type: ignore[union-attr]
    assert len(gateway.called("chat.getPermalink")) == 1


def _held(fake_kandev: FakeKandev, monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Kandev's list answers only once the second event is set; the first is set when a read
    began."""
    began, answer = threading.Event(), threading.Event()
    list_listed = fake_kandev.list_listed

    def held(**kwargs):
        began.set()
        assert answer.wait(10)
        return list_listed(**kwargs)

    monkeypatch.setattr(fake_kandev, "list_listed", held)
    return began, answer


def _overlapping(
    queue: WaitingQueue, fake_kandev: FakeKandev, monkeypatch, *, joining: int
) -> list[Future]:
    """One view's read of the list, held until ``joining`` more views asked while it ran;
    every view's call (done)."""
    began, answer = _held(fake_kandev, monkeypatch)
    with ThreadPoolExecutor(1 + joining) as pool:
        first = pool.submit(queue.waiting)
        assert began.wait(5)
        others = [pool.submit(queue.waiting) for _ in range(joining)]
        _until(lambda: queue.reads.joined == joining)
        answer.set()
    return [first, *others]


def test_views_asking_while_a_read_of_the_list_runs_share_it(
    queue: WaitingQueue, fake_kandev: FakeKandev, listed, monkeypatch
) -> None:
    results = [f.result(5) for f in _overlapping(queue, fake_kandev, monkeypatch, joining=2)]

    assert len(fake_kandev.called("list_listed")) == 1
    assert [[i.pending_id for i in r] for r in results] == [["pending-001", "pending-002"]] * 3
    # Once it is over, a view reads again: what is shared is a read in progress, never kept.
    queue.waiting()
    assert len(fake_kandev.called("list_listed")) == 2


def test_a_shared_read_that_fails_fails_for_everyone_who_waited_on_it(
    queue: WaitingQueue, fake_kandev: FakeKandev, listed, monkeypatch
) -> None:
    fake_kandev.fail("list_listed", times=1)
    for future in _overlapping(queue, fake_kandev, monkeypatch, joining=1):
        with pytest.raises(KandevUnavailable):
            future.result(5)

    assert len(fake_kandev.called("list_listed")) == 1
    assert [i.pending_id for i in queue.waiting()] == ["pending-001", "pending-002"]


def test_reads_of_different_workspaces_are_not_shared(
    queue: WaitingQueue, fake_kandev: FakeKandev, listed, monkeypatch
) -> None:
    began, answer = _held(fake_kandev, monkeypatch)
    with ThreadPoolExecutor(2) as pool:
        everything = pool.submit(queue.waiting)
        assert began.wait(5)
        data = pool.submit(queue.waiting, "ws-2")
        answer.set()
        assert [i.pending_id for i in data.result(5)] == ["pending-002"]
        assert len(everything.result(5)) == 2

    assert sorted(str(c["workspace_id"]) for c in fake_kandev.called("list_listed")) == [
        "None",
        "ws-2",
    ]
    assert queue.reads.joined == 0


def _until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)
