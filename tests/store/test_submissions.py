"""Submissions: each distinct answer is sent once; unfinished ones can be taken over once."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from bot.store import Store
from tests.store.factories import FakeClock

PAYLOAD = json.dumps({"answers": [{"question_id": "q1", "selected_options": ["o1"]}]})


def test_first_caller_begins_a_submission(store: Store, clock: FakeClock) -> None:
    assert store.begin_submission("p1", "act-1", "U1", PAYLOAD)
    assert not store.begin_submission("p1", "act-1", "U2", "{}")  # a redelivery
    assert store.begin_submission("p1", "act-2", "U2", "{}")  # another distinct submission
    sub = store.get_submission("act-1")
    assert sub is not None
    assert (sub.pending_id, sub.user, sub.payload_json, sub.result_json) == (
        "p1",
        "U1",
        PAYLOAD,
        None,
    )
    assert sub.created_at == sub.leased_at == clock.now
    assert not sub.finished
    assert store.get_submission("unknown") is None


def test_begin_race_across_store_instances(open_store: Callable[..., Store]) -> None:
    stores = [open_store() for _ in range(3)]
    with ThreadPoolExecutor(12) as pool:
        results = list(
            pool.map(
                lambda n: stores[n % 3].begin_submission("p1", "act-1", f"U{n}", PAYLOAD),
                range(12),
            )
        )
    assert results.count(True) == 1


def test_finish_records_the_result_once(store: Store, clock: FakeClock) -> None:
    store.begin_submission("p1", "act-1", "U1", PAYLOAD)
    clock.advance(1)
    assert store.finish_submission("act-1", '{"outcome": "won"}')
    assert not store.finish_submission("act-1", '{"outcome": "lost"}')
    assert not store.finish_submission("unknown", "{}")
    sub = store.get_submission("act-1")
    assert sub is not None and sub.finished
    assert (sub.result_json, sub.finished_at) == ('{"outcome": "won"}', clock.now)


def test_unfinished_submissions_and_takeover(store: Store, clock: FakeClock) -> None:
    store.begin_submission("p1", "old", "U1", PAYLOAD)
    clock.advance(20)
    store.begin_submission("p2", "new", "U1", PAYLOAD)
    store.begin_submission("p3", "done", "U1", PAYLOAD)
    store.finish_submission("done", "{}")
    clock.advance(20)
    assert [s.submission_key for s in store.unfinished_submissions()] == ["old", "new"]
    assert [s.submission_key for s in store.unfinished_submissions(30)] == ["old"]
    with ThreadPoolExecutor(8) as pool:
        wins = list(pool.map(lambda _: store.reclaim_submission("old", 30), range(8)))
    assert wins.count(True) == 1
    assert store.get_submission("old").leased_at == clock.now  # type: ignore[union-attr]
    assert store.unfinished_submissions(30) == []
    assert not store.reclaim_submission("new", 30)  # its lease is still young
    assert not store.reclaim_submission("done", 0)


def test_in_flight_means_unfinished_and_renewed_lately(store: Store, clock: FakeClock) -> None:
    assert store.begin_submission("p1", "k1", "U1", "{}")
    assert store.submission_in_flight("p1", within_s=10)
    assert not store.submission_in_flight("p1", within_s=10, besides="k1")
    assert not store.submission_in_flight("p2", within_s=10)
    clock.advance(11)
    assert not store.submission_in_flight("p1", within_s=10)  # its sender stopped renewing
    assert store.renew_submissions(["k1"]) == 1
    assert store.submission_in_flight("p1", within_s=10)
    assert store.finish_submission("k1", "{}")
    assert not store.submission_in_flight("p1", within_s=10)
