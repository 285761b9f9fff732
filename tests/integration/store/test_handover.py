"""A stopping replica hands its work over at once: the outbox items it holds go back to
nobody and the answers it could not finish are made stale, so another worker takes both now
instead of after their leases run out. And the counts an operator watches (``stats``)."""

from __future__ import annotations

from datetime import timedelta

from kandev_slack.core.domain import CardState
from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent
from kandev_slack.usecases.leases import OUTBOX_LEASE_S, SUBMISSION_LEASE_S
from tests.kit.factories import answered, record_card
from tests.kit.fakes import FakeClock

REJECT = SubmissionContent(action="reject", reason="not now")


def test_released_outbox_items_are_taken_by_another_worker_at_once(
    store: Database, clock: FakeClock
) -> None:
    ids = [store.outbox.outbox_put("post", f"post:p{n}", {"pending_id": f"p{n}"}) for n in range(3)]
    mine = store.outbox.outbox_take(None, 2, "pub-stopping", lease_s=OUTBOX_LEASE_S)
    assert [i.id for i in mine] == ids[:2]
    store.outbox.outbox_note(ids[0], "posting")
    assert [i.id for i in store.outbox.outbox_take(None, 10, "pub-other")] == [ids[2]]
    assert store.outbox.outbox_take(None, 10, "pub-other") == []  # leased for OUTBOX_LEASE_S

    assert store.outbox.outbox_release("pub-stopping") == 2
    taken = store.outbox.outbox_take(None, 10, "pub-other")  # no time has passed
    assert sorted(i.id for i in taken) == ids[:2]
    by_id = {i.id: i for i in taken}
    assert by_id[ids[0]].last_error == "posting"  # looked up in Slack before posting again
    assert store.outbox.outbox_release("pub-stopping") == 0  # nothing of another worker is touched
    assert all(i.lease_owner == "pub-other" for i in map(store.outbox.outbox_get, ids) if i)


def test_released_submissions_are_stale_at_once(store: Database, clock: FakeClock) -> None:
    store.submissions.begin_submission("p1", "s1", "U1", REJECT)
    store.submissions.begin_submission("p2", "s2", "U1", REJECT)
    store.submissions.begin_submission("p3", "s3", "U1", REJECT)
    store.submissions.finish_submission("s3", "won")
    assert store.submissions.unfinished_submissions(older_than_s=SUBMISSION_LEASE_S) == []
    assert store.submissions.submission_in_flight("p1", SUBMISSION_LEASE_S)

    assert store.submissions.release_submissions(["s1", "s3"]) == 1  # a finished one stays as it is
    stale = store.submissions.unfinished_submissions(older_than_s=SUBMISSION_LEASE_S)
    assert [s.submission_key for s in stale] == ["s1"]
    assert not store.submissions.submission_in_flight("p1", SUBMISSION_LEASE_S)
    # The longest backoff of crash recovery is far shorter than a released lease's age.
    assert store.submissions.take_over_submission("s1", SUBMISSION_LEASE_S * 2**4)
    assert store.submissions.release_submissions([]) == 0


def test_stats_counts_what_an_operator_watches(store: Database, clock: FakeClock) -> None:
    empty = store.stats()
    assert (empty.pending_cards, empty.oldest_pending_at, empty.outbox_pending) == (0, None, 0)
    assert empty.schema_version >= 6
    record_card(store, "p1")
    clock.advance(60)
    record_card(store, "p2")
    record_card(store, "p3")
    store.cards.transition("p3", answered())
    failed = store.outbox.outbox_put("post", "post:p1", {"pending_id": "p1"})
    assert failed is not None
    store.outbox.outbox_fail(failed, "channel_not_found")
    done = store.outbox.outbox_put("post", "post:p2", {"pending_id": "p2"})
    assert done is not None
    store.outbox.outbox_done(done)
    store.outbox.outbox_put("update", "update:p3:answered", {"pending_id": "p3"})
    store.submissions.begin_submission("p2", "s1", "U1", REJECT)
    stats = store.stats()
    assert store.cards.get("p3").state is CardState.ANSWERED  # type: ignore[union-attr]
    assert stats.pending_cards == 2
    assert stats.oldest_pending_at == clock.now - timedelta(seconds=60)
    assert (stats.outbox_pending, stats.outbox_failed, stats.unfinished_submissions) == (1, 1, 1)
