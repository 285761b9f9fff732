"""Submissions remember how often crash recovery re-sent them (schema step 6) and the refusal a
person was told, so a resubmission can hear it again. SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, insert

from kandev_slack.store import Database, migrate
from kandev_slack.store.records import SubmissionContent, SubmissionVerdict
from kandev_slack.store.schema import submissions
from kandev_slack.store.sql.engine import make_engine
from kandev_slack.store.sql.url import normalize_url

CONTENT = SubmissionContent(action="reject", reason="not now")


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(normalize_url(db_url))
    yield engine
    engine.dispose()


def test_a_submission_of_an_older_schema_reads_with_no_resends(
    engine: Engine, open_store: Callable[..., Database]
) -> None:
    assert migrate(engine, "0004") == 4
    at = datetime(2020, 1, 1, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(
            insert(submissions).values(
                submission_key="old",
                pending_id="p1",
                user_id="U1",
                payload_json=CONTENT.encode(),
                result_json=None,
                created_at=at,
                leased_at=at,
                finished_at=None,
            )
        )
    store = open_store()
    sub = store.submissions.get_submission("old")
    assert sub is not None and sub.resends == 0 and not sub.finished
    assert store.submissions.take_over_submission("old", 0)
    assert store.submissions.get_submission("old").resends == 1


def test_each_take_over_counts_a_resend(store: Database, clock) -> None:
    assert store.submissions.begin_submission("p1", "k", "U1", CONTENT)
    for n in (1, 2, 3):
        clock.advance(60)
        assert store.submissions.take_over_submission("k", 30)
        assert store.submissions.get_submission("k").resends == n
    assert not store.submissions.take_over_submission(
        "k", 30
    )  # just taken over: its lease is young
    assert store.submissions.get_submission("k").resends == 3


def test_a_refusal_is_kept_with_the_result(store: Database) -> None:
    store.submissions.begin_submission("p1", "refused", "U1", CONTENT)
    store.submissions.begin_submission("p1", "won", "U2", CONTENT)
    assert store.submissions.finish_submission(
        "refused", "invalid", "Kandev did not accept your answer: x"
    )
    assert store.submissions.finish_submission("won", "won")
    refused = store.submissions.get_submission("refused")
    assert (refused.verdict, refused.verdict_message) == (
        "invalid",
        "Kandev did not accept your answer: x",
    )
    assert store.submissions.get_submission("won").verdict_message == ""
    # A result without a message is encoded as before, so older rows and queries agree.
    assert SubmissionVerdict(kind="won").encode() == '{"kind":"won"}'
    assert store.submissions.won_submission("p1").submission_key == "won"
