"""Fencing at the store: every outbox effect of a worker holds only while its lease is live
(owner AND expiry, in the statement that writes), and a post is recorded only where no other
message is recorded yet."""

from __future__ import annotations

from kandev_slack.store import Database, OutboxStatus
from kandev_slack.store.records import SubmissionContent
from tests.kit.factories import record_card
from tests.kit.fakes import FakeClock


def test_a_worker_frozen_past_its_lease_can_no_longer_act_on_the_item(
    store: Database, clock: FakeClock
) -> None:
    item = store.outbox.outbox_put("post", "post:p1", {"pending_id": "p1"})
    assert item is not None
    store.outbox.outbox_take(None, 1, "frozen", lease_s=10)
    assert store.outbox.outbox_note(item, "posting", worker_id="frozen")
    clock.advance(11)  # frozen past its lease; nobody took the item over yet
    assert not store.outbox.outbox_note(item, "posting", worker_id="frozen")
    assert store.outbox.outbox_renew("frozen", 10) == 0  # its heartbeat cannot revive it
    assert not store.outbox.outbox_done(item, worker_id="frozen")
    assert not store.outbox.outbox_fail(item, "x", worker_id="frozen")
    assert not store.outbox.outbox_retry(item, 5.0, "paced", worker_id="frozen")

    [taken] = store.outbox.outbox_take(None, 1, "other", lease_s=10)
    assert (taken.id, taken.last_error) == (item, "posting")  # it looks in Slack first
    assert not store.outbox.outbox_note(item, "posting", worker_id="frozen")
    assert not store.outbox.outbox_done(item, worker_id="frozen")
    assert store.outbox.outbox_note(item, "posting", worker_id="other")
    assert store.outbox.outbox_done(item, worker_id="other")
    done = store.outbox.outbox_get(item)
    assert done is not None and done.status is OutboxStatus.DONE


def test_a_post_is_recorded_only_where_no_other_message_is(store: Database) -> None:
    record_card(store, "p1")
    assert store.cards.mark_posted("p1", "C1", "1.1")
    assert store.cards.mark_posted("p1", "C1", "1.1")  # the same message again: fine
    assert not store.cards.mark_posted("p1", "C1", "2.2")  # a second post: refused
    card = store.cards.get("p1")
    assert card is not None and card.ts == "1.1"


def test_a_submission_is_sent_only_by_its_holder_with_a_live_lease(
    store: Database, clock: FakeClock
) -> None:
    ANY = SubmissionContent(action="answer")
    assert store.submissions.begin_submission("p1", "k1", "U1", ANY)
    assert store.submissions.hold_submission("k1", 0, 10)
    clock.advance(11)  # frozen past its lease
    assert not store.submissions.hold_submission("k1", 0, 10)
    assert store.submissions.renew_submissions(["k1"], 10) == 0  # the heartbeat cannot revive it
    assert store.submissions.take_over_submission("k1", 10)  # recovery takes it over: holder 1
    assert not store.submissions.hold_submission("k1", 0, 10)
    assert store.submissions.hold_submission("k1", 1, 10)
    store.submissions.finish_submission("k1", "won")
    assert not store.submissions.hold_submission("k1", 1, 10)
