"""Retention: ``purge(older_than)`` removes what is older than the retention period — resolved
cards with their submissions and outbox rows, audit entries, Home viewers — and nothing else."""

from __future__ import annotations

from datetime import timedelta

from kandev_slack.core.domain import CardState
from kandev_slack.core.timing.calm import ALONE
from kandev_slack.store import Database
from kandev_slack.store.cards.followups import NewCopy
from kandev_slack.store.cards.thread_replies import SENT, ThreadReply
from kandev_slack.store.records import SubmissionContent
from tests.kit.factories import answered, record_card
from tests.kit.fakes import FakeClock

DAYS_90 = timedelta(days=90)


def test_purge_removes_only_what_is_older_than_the_retention(
    store: Database, clock: FakeClock
) -> None:
    # Old: resolved 100 days ago, with a submission, outbox rows and audit entries.
    record_card(store, "old")
    store.cards.mark_posted("old", "C1", "1.1")
    assert store.submissions.begin_submission(
        "old", "k-old", "U1", SubmissionContent(action="answer")
    )
    store.submissions.finish_submission("k-old", "won")
    store.cards.transition("old", answered("U1"))
    post = store.outbox.outbox_put("post", "post:old", {"pending_id": "old"})
    edit = store.outbox.outbox_put("update", "update:old:answered", {"pending_id": "old"})
    store.outbox.outbox_take(None, 10, "w1")
    store.outbox.outbox_done(post)  # type: ignore[arg-type]
    store.outbox.outbox_done(edit)  # type: ignore[arg-type]
    store.audit_log.audit("old", "U1", "answer", "button", "won")
    store.viewers.home_opened("U-gone")
    # Old but still waiting: a pending card and an unfinished submission are kept.
    record_card(store, "waiting")
    assert store.submissions.begin_submission(
        "waiting", "k-waiting", "U2", SubmissionContent(action="answer")
    )

    clock.advance(100 * 24 * 3600)
    # Recent: resolved today, an audit entry and a Home viewer of today.
    record_card(store, "recent")
    store.cards.transition("recent", answered("U3"))
    recent_edit = store.outbox.outbox_put(
        "update", "update:recent:answered", {"pending_id": "recent"}
    )
    store.outbox.outbox_take(None, 10, "w1")
    store.outbox.outbox_done(recent_edit)  # type: ignore[arg-type]
    store.audit_log.audit("recent", "U3", "answer", "button", "won")
    store.viewers.home_opened("U-here")

    purged = store.retention.purge(DAYS_90)

    assert (purged.cards, purged.submissions, purged.outbox, purged.audit, purged.home_viewers) == (
        1,
        1,
        2,
        1,
        1,
    )
    assert store.cards.get("old") is None
    assert store.cards.by_message("C1", "1.1") is None
    assert store.submissions.submissions_for("old") == []
    assert store.outbox.outbox_get(post) is None and store.outbox.outbox_get(edit) is None  # type: ignore[arg-type]
    assert store.outbox.outbox_put("post", "post:old", {}) is not None  # its key is free again
    assert [e.pending_id for e in store.audit_log.audit_entries()] == ["recent"]
    assert store.viewers.home_viewers(since=clock.now - timedelta(days=365)) == ["U-here"]
    # Kept: the waiting card and its unfinished submission, everything recent.
    assert (
        store.cards.get("waiting") is not None
        and store.cards.get("waiting").state is CardState.PENDING
    )  # type: ignore[union-attr]
    assert [s.submission_key for s in store.submissions.unfinished_submissions()] == ["k-waiting"]
    assert store.cards.get("recent") is not None
    assert store.outbox.outbox_get(recent_edit) is not None  # type: ignore[arg-type]
    assert store.retention.purge(DAYS_90) == type(purged)()  # nothing more to do


def test_finished_outbox_rows_are_kept_a_week_at_most(store: Database, clock: FakeClock) -> None:
    item = store.outbox.outbox_put("update", "update:p1:answered", {"pending_id": "p1"})
    store.outbox.outbox_take(None, 10, "w1")
    store.outbox.outbox_done(item)  # type: ignore[arg-type]
    clock.advance(6 * 24 * 3600)
    assert store.retention.purge(DAYS_90).outbox == 0
    clock.advance(2 * 24 * 3600)
    assert store.retention.purge(DAYS_90).outbox == 1
    assert store.outbox.outbox_get(item) is None  # type: ignore[arg-type]


def test_purge_uses_the_databases_clock(open_store) -> None:
    store = open_store()  # no clock: the database's own
    record_card(store, "p1")
    store.cards.transition("p1", answered("U1"))
    store.audit_log.audit("p1", "U1", "answer", "button", "won")
    assert store.retention.purge(timedelta(days=1)).cards == 0  # resolved just now
    assert store.retention.purge(timedelta(seconds=0)).cards == 1
    assert store.cards.get("p1") is None


def test_purge_keeps_the_stores_retention_by_default(open_store, clock: FakeClock) -> None:
    store = open_store(clock=clock, retention_days=2)
    record_card(store, "p1")
    store.cards.transition("p1", answered("U1"))
    clock.advance(24 * 3600)
    assert store.retention.purge().cards == 0
    clock.advance(24 * 3600)
    assert store.retention.purge().cards == 1


def test_thread_replies_are_kept_a_week_at_most(store: Database, clock: FakeClock) -> None:
    reply = ThreadReply("", "C1:100.2", "p1", "C1", "100.1", "U1", "db", None, "use the cluster")
    kept, new = store.thread_replies.offer_reply(reply)
    assert new and store.thread_replies.offer_reply(reply) == (kept, False)  # a redelivery
    assert store.thread_replies.settle_reply(kept.id, "U1", SENT)
    assert not store.thread_replies.settle_reply(kept.id, "U1", SENT)  # a double click
    clock.advance(6 * 24 * 3600)
    assert store.retention.purge(DAYS_90).thread_replies == 0
    clock.advance(2 * 24 * 3600)
    assert store.retention.purge(DAYS_90).thread_replies == 1
    assert store.thread_replies.thread_reply(kept.id) is None


def test_a_gathering_dm_is_forgotten_once_no_card_joined_it_within_the_retention(
    store: Database, clock: FakeClock
) -> None:
    keys: list[str] = []
    for n in range(ALONE + 2):  # ALONE cards on their own, then one opens a gathering, one joins
        record_card(store, f"p{n}")
        dm = NewCopy(key=f"dm:p{n}:U1", kind="dm", target="U1", note="")
        assert store.followups.mark_notified(
            f"p{n}", [dm], [], gathered=lambda key, joined: keys.append(key) or []
        )
    assert len(set(keys)) == 1
    assert store.cards.gather_get(keys[0]) is not None
    clock.advance(DAYS_90.total_seconds() - 60)
    assert store.retention.purge(DAYS_90).gatherings == 0
    clock.advance(120)
    assert store.retention.purge(DAYS_90).gatherings == 1
    assert store.cards.gather_get(keys[0]) is None
