"""Statements built once (``Sql.prepared`` and the module-level hot reads), with the database's
own clock as the bot runs (SQLite and PostgreSQL): each is reused, and a reused one binds each
call's own values — a second call never sees the first's."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import bindparam, select

from kandev_slack.core.domain import CardState, NewCard
from kandev_slack.kinds.registry import spec_of
from kandev_slack.store import Database
from kandev_slack.store.records import OutboxStatus, SubmissionContent
from kandev_slack.store.schema import cards
from tests.kit.factories import make_bundle, make_outcome, make_question, make_task

KEY = str(spec_of("question").identity_key(make_bundle(make_question()), "ws-1"))


def _card(store: Database, pending_id: str, *, ts: str, channel: str = "C1") -> None:
    bundle = make_bundle(make_question(), pending_id=pending_id, task_id=pending_id)
    assert store.cards.record_card(
        NewCard(bundle, make_task(pending_id, workspace_id="ws-1"), channel)
    )
    assert store.cards.mark_posted(pending_id, channel, ts)


def test_a_statement_is_built_once_per_key_with_the_databases_clock(
    open_store: Callable[..., Database],
) -> None:
    sql = open_store().sql
    built: list[str] = []

    def build(name: str):
        built.append(name)
        return select(cards).where(cards.c.pending_id == bindparam("pending_id"))

    first = sql.prepared(("get", 1), lambda: build("a"))
    assert sql.prepared(("get", 1), lambda: build("b")) is first
    assert sql.prepared(("get", 2), lambda: build("c")) is not first
    assert built == ["a", "c"]


def test_with_a_clock_each_statement_is_built_anew(store: Database) -> None:
    built = []
    for _ in range(2):
        store.sql.prepared("now", lambda: built.append(1) or select(store.sql.now()))
    assert len(built) == 2  # the clock's now is a literal of its moment


def test_cards_read_and_change_by_each_calls_own_values(
    open_store: Callable[..., Database],
) -> None:
    store = open_store()
    for n in (1, 2, 3):
        _card(store, f"p{n}", ts=f"1.{n}")
    assert [store.cards.get(f"p{n}").ts for n in (1, 2, 3)] == ["1.1", "1.2", "1.3"]
    assert store.cards.get("nope") is None
    assert store.cards.by_any_message("C1", "1.2").pending_id == "p2"
    assert store.cards.by_any_message("C2", "1.2") is None
    mates = store.cards.same_item(KEY, "C1", exclude="p1")
    assert [c.pending_id for c in mates] == ["p2", "p3"]
    assert [c.pending_id for c in store.cards.same_item(KEY, "C1", limit=1)] == ["p1"]

    answered = make_outcome(CardState.ANSWERED, via="slack", by_user="U0ANA")
    assert store.cards.transition("p1", answered)
    assert not store.cards.transition("p1", answered)  # once
    rejected = make_outcome(CardState.REJECTED, via="kandev")
    assert store.cards.transition("p2", rejected)
    assert store.cards.get("p1").state is CardState.ANSWERED
    assert store.cards.get("p1").outcome.by_user == "U0ANA"
    assert store.cards.get("p2").state is CardState.REJECTED
    assert store.cards.get("p3").state is CardState.PENDING
    # Corrected from a known state only (the compare-and-set of another expected state).
    assert store.cards.transition("p2", answered, expected=CardState.REJECTED)
    assert store.cards.get("p2").outcome.by_user == "U0ANA"

    since = store.cards.same_item(KEY, "C1", exclude="p3", resolved_since_of="p1")
    assert {c.pending_id for c in since} == {"p1", "p2"}
    assert [c.pending_id for c in store.cards.same_item(KEY, "C1")] == ["p3"]


def test_submissions_fence_and_finish_by_their_own_key(
    open_store: Callable[..., Database],
) -> None:
    subs = open_store().submissions
    content = SubmissionContent(action="answer")
    assert subs.begin_submission("p1", "k1", "U1", content)
    assert subs.begin_submission("p1", "k2", "U2", content)
    assert not subs.begin_submission("p1", "k1", "U1", content)  # recorded once
    assert subs.hold_submission("k1", 0, 60.0)
    assert not subs.hold_submission("k1", 1, 60.0)  # another holder's
    assert subs.hold_submission("k2", 0, 60.0)
    assert subs.submission_in_flight("p1", 60.0, besides="k1")  # k2 is
    assert not subs.submission_in_flight("p2", 60.0)

    assert subs.finish_submission("k1", "won")
    assert not subs.finish_submission("k1", "lost")  # finished once
    assert subs.get_submission("k1").verdict == "won"
    assert not subs.get_submission("k2").finished
    assert not subs.hold_submission("k1", 0, 60.0)  # finished: no fence to hold
    assert subs.finish_submission("k2", "invalid", "too long")
    assert subs.get_submission("k2").verdict_message == "too long"
    assert not subs.submission_in_flight("p1", 60.0)


def test_outbox_rows_enqueue_note_and_finish_by_their_own_values(
    open_store: Callable[..., Database],
) -> None:
    outbox = open_store().outbox
    later = datetime.now(UTC) + timedelta(hours=1)
    now_id = outbox.outbox_put("update", "u:p1", {"pending_id": "p1"}, "C1")
    delayed = outbox.outbox_put("update", "u:p2", {"pending_id": "p2"}, "C1", delay_s=600)
    at = outbox.outbox_put("update", "u:p3", {"pending_id": "p3"}, "C1", not_before=later)
    assert outbox.outbox_put("update", "u:p1", {"pending_id": "p1"}, "C1") is None  # taken
    assert None not in (now_id, delayed, at)
    assert outbox.outbox_get(now_id).payload == {"pending_id": "p1"}
    assert outbox.outbox_get(at).not_before == later
    assert outbox.outbox_get(delayed).not_before > datetime.now(UTC) + timedelta(seconds=500)

    (taken,) = outbox.outbox_take(None, 10, "w1")  # only the one due now
    assert taken.id == now_id
    assert not outbox.outbox_note(now_id, "posting", worker_id="w2")  # not w2's lease
    assert outbox.outbox_note(now_id, "posting", worker_id="w1")
    assert outbox.outbox_get(now_id).last_error == "posting"
    assert not outbox.outbox_done(now_id, worker_id="w2")
    assert outbox.outbox_done(now_id, worker_id="w1")
    assert outbox.outbox_get(now_id).status is OutboxStatus.DONE
    assert outbox.outbox_fail(at, "channel_not_found")
    assert outbox.outbox_get(at).status is OutboxStatus.FAILED
    assert outbox.outbox_get(at).last_error == "channel_not_found"
    assert outbox.outbox_get(delayed).status is OutboxStatus.PENDING


def test_audit_entries_keep_each_calls_values(open_store: Callable[..., Database]) -> None:
    audit = open_store().audit_log
    audit.audit("p1", "U1", "answer", "slack:button", "won")
    audit.audit(None, None, "post", "sync", "error", "boom", kandev_user="ku-1")
    newest, oldest = audit.audit_entries()
    assert (oldest.pending_id, oldest.user, oldest.result) == ("p1", "U1", "won")
    assert (newest.pending_id, newest.detail, newest.kandev_user) == (None, "boom", "ku-1")
    assert newest.user != oldest.user


def test_outbox_takes_lease_each_calls_own_items_and_worker(
    open_store: Callable[..., Database],
) -> None:
    outbox = open_store().outbox
    ids = [outbox.outbox_put("update", f"u:p{n}", {"pending_id": f"p{n}"}, "C1") for n in (1, 2, 3)]
    post = outbox.outbox_put("post", "p:p4", {"pending_id": "p4"}, "C1")
    (first,) = outbox.outbox_take(None, 1, "w1", kinds=["update"])
    (second,) = outbox.outbox_take(None, 1, "w2", kinds=["update"])
    rest = outbox.outbox_take(None, 10, "w3", kinds=["update"])
    assert [first.id, second.id, *[e.id for e in rest]] == ids
    assert (first.lease_owner, second.lease_owner, rest[0].lease_owner) == ("w1", "w2", "w3")
    assert [e.id for e in outbox.outbox_take(None, 10, "w4")] == [post]  # any kind
