"""The heartbeat behind crash recovery: a live process keeps its leases, a dead one loses them.

At the store (SQLite and PostgreSQL): ``outbox_renew`` extends only the renewing worker's live
leases; ``renew_submissions`` refreshes only unfinished submissions. ``LeaseKeeper`` renews
what ``InFlight`` holds, and stops renewing once a submission is let go. A card edit that ran
as a no-op (its post was still on the way) can be re-armed once the post landed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent
from kandev_slack.usecases.answering.verdicts import Attempt
from kandev_slack.usecases.leases import InFlight, LeaseKeeper

ANY = SubmissionContent(action="answer")

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request, tmp_path: Path, clock: Clock) -> Iterator[Database]:
    url = (
        f"sqlite:///{tmp_path / 'leases.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    with Database(url, clock=clock) as opened:
        yield opened


def test_only_the_renewing_workers_live_leases_are_extended(store: Database, clock: Clock) -> None:
    mine = store.outbox.outbox_put("post", "post:a", {"pending_id": "a"})
    theirs = store.outbox.outbox_put("post", "post:b", {"pending_id": "b"})
    store.outbox.outbox_take(clock(), limit=1, worker_id="me", lease_s=10)
    store.outbox.outbox_take(clock(), limit=1, worker_id="them", lease_s=10)

    clock.advance(8)
    assert store.outbox.outbox_renew("me", 10) == 1
    clock.advance(5)  # 13 s after the takes: their lease ran out, mine was renewed at 8 s
    assert store.outbox.outbox_take(clock(), limit=5, worker_id="next", lease_s=10) == [
        store.outbox.outbox_get(theirs)
    ]
    assert store.outbox.outbox_get(mine).lease_owner == "me"

    store.outbox.outbox_done(mine)
    assert store.outbox.outbox_renew("me", 10) == 0  # a finished item has no lease to renew


def test_renewed_submissions_are_not_stale_finished_ones_are_left_alone(
    store: Database, clock: Clock
) -> None:
    for key in ("alive", "dead", "done"):
        assert store.submissions.begin_submission("p1", key, "U1", ANY)
    store.submissions.finish_submission("done", "won")
    clock.advance(8)
    assert store.submissions.renew_submissions(["alive", "done"]) == 1
    assert store.submissions.renew_submissions([]) == 0
    clock.advance(5)
    stale = [s.submission_key for s in store.submissions.unfinished_submissions(older_than_s=10)]
    assert stale == ["dead"]
    assert not store.submissions.take_over_submission("alive", 10)
    assert store.submissions.take_over_submission("dead", 10)


def test_the_keeper_renews_what_is_in_flight_until_it_lands(store: Database, clock: Clock) -> None:
    in_flight = InFlight()
    keeper = LeaseKeeper(store.outbox, store.submissions, "pub-1", in_flight, outbox_lease_s=10)
    store.submissions.begin_submission("p1", "k1", "U1", ANY)
    with in_flight.hold("k1"):
        assert "k1" in in_flight
        with in_flight.hold("k1"):  # re-entrant: recovery and a live submit may overlap
            pass
        assert in_flight.keys() == ["k1"]
        clock.advance(9)
        assert keeper.renew_once() == (0, 1)
    assert in_flight.keys() == []
    clock.advance(9)
    assert keeper.renew_once() == (0, 0)
    assert [
        s.submission_key for s in store.submissions.unfinished_submissions(older_than_s=10)
    ] == []
    clock.advance(2)
    assert [
        s.submission_key for s in store.submissions.unfinished_submissions(older_than_s=10)
    ] == ["k1"]


def test_the_keeper_thread_stops_with_the_process(store: Database) -> None:
    keeper = LeaseKeeper(store.outbox, store.submissions, "pub-1", InFlight(), heartbeat_s=0.01)
    stop = threading.Event()
    thread = threading.Thread(target=keeper.run, args=(stop,))
    thread.start()
    stop.set()
    thread.join(timeout=2)
    assert not thread.is_alive()


def test_a_stored_submission_becomes_the_attempt_it_recorded(store: Database) -> None:
    answer_db = Answer(question_id="db", selected_options=["q1_opt2"])
    store.submissions.begin_submission(
        "p1", "k1", "U1", SubmissionContent(action="answer", answers=[answer_db])
    )
    store.submissions.begin_submission(
        "p1", "k2", "U2", SubmissionContent(action="reject", reason="no")
    )
    subs = store.submissions.submissions_for("p1")
    answer, reject = (Attempt.of(s, source="recovery") for s in subs)
    assert (answer.user_id, answer.action, answer.source) == ("U1", "answer", "recovery")
    assert [a.selected_options for a in answer.answers] == [["q1_opt2"]]
    assert (reject.user_id, reject.action, reject.reason, reject.answers) == (
        "U2",
        "reject",
        "no",
        (),
    )


def test_a_finished_edit_can_be_rearmed_but_a_pending_one_is_left_as_is(
    store: Database, clock: Clock
) -> None:
    item = store.outbox.outbox_put("update", "update:a:answered", {"pending_id": "a"})
    assert not store.outbox.outbox_rearm("update:a:answered")  # still pending: it will run anyway
    assert not store.outbox.outbox_rearm("update:unknown:answered")
    store.outbox.outbox_take(clock(), limit=1, worker_id="me")
    store.outbox.outbox_done(item)
    assert store.outbox.outbox_take(clock(), limit=1, worker_id="me") == []

    assert store.outbox.outbox_rearm("update:a:answered")
    again = store.outbox.outbox_take(clock(), limit=1, worker_id="me")
    assert [(i.id, i.attempts, i.status.value) for i in again] == [(item, 1, "pending")]
    assert store.outbox.outbox_put("update", "update:a:answered", {"pending_id": "a"}) is None
