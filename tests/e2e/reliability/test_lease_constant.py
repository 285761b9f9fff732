"""One submission lease: what crash recovery takes over is never also "in flight" for answers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent
from kandev_slack.usecases.leases import SUBMISSION_LEASE_S


class Clock:
    def __init__(self) -> None:
        self.behind_s = 0.0

    def __call__(self) -> datetime:
        return datetime.now(UTC) - timedelta(seconds=self.behind_s)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Iterator[Database]:
    with Database(f"sqlite:///{tmp_path / 'lease.db'}", clock=clock) as opened:
        yield opened


@pytest.mark.parametrize("age_s", [1.0, SUBMISSION_LEASE_S + 5, SUBMISSION_LEASE_S * 3 + 5])
def test_a_submission_is_in_flight_exactly_while_recovery_leaves_it_alone(
    store: Database, clock: Clock, age_s: float
) -> None:
    clock.behind_s = age_s  # its lease was last renewed age_s ago
    assert store.submissions.begin_submission(
        "p1", "key-1", "U0ALICE", SubmissionContent(action="answer")
    )
    clock.behind_s = 0
    stale = [s.submission_key for s in store.submissions.unfinished_submissions(SUBMISSION_LEASE_S)]
    assert store.submissions.submission_in_flight("p1", SUBMISSION_LEASE_S) is (stale == [])
