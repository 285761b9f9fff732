"""Submissions: each distinct answer is sent once; unfinished ones can be taken over once."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent, SubmissionVerdict
from tests.kit.fakes import FakeClock

PAYLOAD = SubmissionContent(
    action="answer", answers=[Answer(question_id="q1", selected_options=["o1"])]
)
OTHER = SubmissionContent(action="reject", reason="not now")


def test_first_caller_begins_a_submission(store: Database, clock: FakeClock) -> None:
    assert store.submissions.begin_submission("p1", "act-1", "U1", PAYLOAD)
    assert not store.submissions.begin_submission("p1", "act-1", "U2", OTHER)  # a redelivery
    assert store.submissions.begin_submission(
        "p1", "act-2", "U2", OTHER
    )  # another distinct submission
    sub = store.submissions.get_submission("act-1")
    assert sub is not None
    assert (sub.pending_id, sub.user, sub.content, sub.verdict) == (
        "p1",
        "U1",
        PAYLOAD,
        None,
    )
    assert sub.created_at == sub.leased_at == clock.now
    assert not sub.finished
    assert store.submissions.get_submission("unknown") is None


def test_begin_race_across_store_instances(open_store: Callable[..., Database]) -> None:
    stores = [open_store() for _ in range(3)]
    with ThreadPoolExecutor(12) as pool:
        results = list(
            pool.map(
                lambda n: stores[n % 3].submissions.begin_submission(
                    "p1", "act-1", f"U{n}", PAYLOAD
                ),
                range(12),
            )
        )
    assert results.count(True) == 1


def test_finish_records_the_result_once(store: Database, clock: FakeClock) -> None:
    store.submissions.begin_submission("p1", "act-1", "U1", PAYLOAD)
    clock.advance(1)
    assert store.submissions.finish_submission("act-1", "won")
    assert not store.submissions.finish_submission("act-1", "lost")
    assert not store.submissions.finish_submission("unknown", "won")
    sub = store.submissions.get_submission("act-1")
    assert sub is not None and sub.finished
    assert (sub.verdict, sub.finished_at) == ("won", clock.now)


def test_unfinished_submissions_and_takeover(store: Database, clock: FakeClock) -> None:
    store.submissions.begin_submission("p1", "old", "U1", PAYLOAD)
    clock.advance(20)
    store.submissions.begin_submission("p2", "new", "U1", PAYLOAD)
    store.submissions.begin_submission("p3", "done", "U1", PAYLOAD)
    store.submissions.finish_submission("done", "lost")
    clock.advance(20)
    assert [s.submission_key for s in store.submissions.unfinished_submissions()] == ["old", "new"]
    assert [s.submission_key for s in store.submissions.unfinished_submissions(30)] == ["old"]
    with ThreadPoolExecutor(8) as pool:
        wins = list(pool.map(lambda _: store.submissions.take_over_submission("old", 30), range(8)))
    assert wins.count(True) == 1
    assert store.submissions.get_submission("old").leased_at == clock.now  # type: ignore[union-attr]
    assert store.submissions.unfinished_submissions(30) == []
    assert not store.submissions.take_over_submission("new", 30)  # its lease is still young
    assert not store.submissions.take_over_submission("done", 0)


def test_the_won_submission_of_a_bundle(store: Database, clock: FakeClock) -> None:
    store.submissions.begin_submission("p1", "lost", "U1", PAYLOAD)
    store.submissions.begin_submission("p1", "won", "U2", OTHER)
    store.submissions.begin_submission("p2", "other", "U3", PAYLOAD)
    assert store.submissions.won_submission("p1") is None
    store.submissions.finish_submission("lost", "lost")
    store.submissions.finish_submission("won", "won")
    store.submissions.finish_submission("other", "won")
    won = store.submissions.won_submission("p1")
    assert won is not None and (won.submission_key, won.user, won.content) == ("won", "U2", OTHER)


def test_a_submission_is_in_flight_while_its_lease_is_young(
    store: Database, clock: FakeClock
) -> None:
    store.submissions.begin_submission("p1", "mine", "U1", PAYLOAD)
    assert not store.submissions.submission_in_flight("p1", 10, besides="mine")
    store.submissions.begin_submission("p1", "theirs", "U2", OTHER)
    assert store.submissions.submission_in_flight("p1", 10, besides="mine")
    assert not store.submissions.submission_in_flight("p2", 10)
    clock.advance(11)
    assert not store.submissions.submission_in_flight(
        "p1", 10
    )  # its process died: lease not renewed
    store.submissions.renew_submissions(["theirs"])
    assert store.submissions.submission_in_flight("p1", 10)
    store.submissions.finish_submission("theirs", "won")
    assert not store.submissions.submission_in_flight("p1", 10, besides="mine")


def test_stored_content_round_trips_and_refuses_anything_else() -> None:
    assert SubmissionContent.decode(PAYLOAD.encode()) == PAYLOAD
    assert SubmissionContent.decode(OTHER.encode()) == OTHER
    with pytest.raises(ValueError, match="not a stored submission"):
        SubmissionContent.decode('{"answers": []}')
    assert SubmissionVerdict.decode(SubmissionVerdict(kind="won").encode()) == "won"
    assert SubmissionVerdict.decode('{"kind": "won"}') == "won"  # rows of earlier versions
    assert SubmissionVerdict.decode(None) is None
