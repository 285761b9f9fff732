"""Cards of several kinds read by replicas of several releases (kandev_slack/store/kinds.py):
a waiting
approval is invisible to the selects of a release before approvals were stored, and readable
by the release deployed before this one (which stores approvals, without a kind); a card of a
kind this release does not know is left alone and reported."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select, text

from kandev_slack.core.approval import Approval, ToolAction, ToolOption, approval_key
from kandev_slack.core.domain import CardOutcome, CardState, NewCard
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.store.migrations import SCHEMA_VERSION, migrate
from kandev_slack.store.schema import cards, outbox
from kandev_slack.store.sql.engine import make_engine
from kandev_slack.store.sql.url import normalize_url
from tests.kit.factories import make_bundle, make_task, record_card
from tests.kit.fakes import FakeClock

FAR = datetime(2100, 1, 1, tzinfo=UTC)

#: The previous release's selects (3fb7d49 kandev_slack/store/cards/cards.py, outbox.py,
#: retention.py),
#: verbatim in their conditions.
PREVIOUS_RELEASE_SELECTS = {
    "reconciler, reminders, listing, Home": "SELECT pending_id FROM cards WHERE state = 'pending'",
    "Home's resolved, purge": "SELECT pending_id FROM cards WHERE state != 'pending'",
    "unposted cards": "SELECT pending_id FROM cards WHERE ts IS NULL AND claimed_at <= :far",
    "outbox worker": "SELECT id FROM outbox WHERE status = 'pending' AND not_before <= :far",
}


def _approval(request_id: str = "req-1") -> Approval:
    return Approval(
        task_id="task-a",
        session_id="session-a",
        request_id=request_id,
        pending_id=f"agentctl-{request_id}",
        created_at=make_bundle().created_at,
        action=ToolAction(type="command", command="make", cwd="/r"),
        options=(ToolOption(option_id="allow_once", name="Allow once", kind="allow_once"),),
    )


def _previous_release_sees(store: Database) -> dict[str, list[Any]]:
    with store.sql.engine.connect() as conn:
        return {
            what: list(conn.scalars(text(sql), {"far": FAR}))
            for what, sql in PREVIOUS_RELEASE_SELECTS.items()
        }


def _upgraded_from(
    db_url: str, revision: str, open_store: Callable[..., Database], clock: FakeClock
):
    engine = make_engine(normalize_url(db_url))
    try:
        migrate(engine, revision)
    finally:
        engine.dispose()
    return open_store(clock=clock)


def test_a_waiting_approval_is_selected_by_no_query_of_the_previous_release(
    db_url: str, open_store: Callable[..., Database], clock: FakeClock
) -> None:
    # Upgraded from the release before approvals were stored (3fb7d49, schema version 10).
    store = _upgraded_from(db_url, "0010", open_store, clock)
    approval = _approval()
    key = approval_key(approval.request_id)
    assert store.cards.record_card(NewCard(approval, make_task("task-a"), "C1"))
    assert store.outbox.outbox_put("post", f"post:{key}", {"pending_id": key}, "C1") is not None
    assert record_card(store, "p-question")

    seen = _previous_release_sees(store)
    assert key not in str(seen), seen
    assert "p-question" in seen["reconciler, reminders, listing, Home"]
    # This release sees it waiting, and takes its post.
    assert sorted(c.pending_id for c in store.cards.pending()) == ["p-question", key]
    assert key in [c.pending_id for c in store.cards.unposted(older_than_s=0)]
    taken = store.outbox.outbox_take(None, limit=5, worker_id="w1")
    assert [(t.payload["pending_id"], t.status.value, t.item_kind) for t in taken] == [
        (key, "pending", "approval")
    ]
    assert store.outbox.outbox_done(taken[0].id, worker_id="w1")
    assert store.stats().pending_cards == 2

    # Resolved, it is a resolved card like any other.
    at = datetime(2030, 1, 1, tzinfo=UTC)
    assert store.cards.transition(key, CardOutcome(state=CardState.ANSWERED, at=at))
    assert not store.cards.transition(key, CardOutcome(state=CardState.ENDED, at=at))
    card = store.cards.get(key)
    assert card is not None and card.state is CardState.ANSWERED
    assert key in _previous_release_sees(store)["Home's resolved, purge"]


def _insert_unknown(store: Database, clock: FakeClock, *, state: str | None) -> None:
    now = clock.now
    with store.sql.engine.begin() as conn:
        conn.execute(
            insert(cards).values(
                pending_id="poll:1",
                kind="poll",
                task_id="task-p",
                session_id="s",
                workspace_id="w",
                channel="C1",
                ts=None,
                state=state,
                bundle_json='{"type": "poll", "pending_id": "x", "task_id": "task-p", '
                '"created_at": "2030-01-01T00:00:00Z"}',
                task_json='{"task_id": "task-p"}',
                claimed_at=None,
                created_at=now - timedelta(days=400),
                updated_at=now,
                resolved_at=None if state is None else now - timedelta(days=400),
            )
        )
        conn.execute(
            insert(outbox).values(
                kind="post",
                item_kind="poll",
                dedupe_key="post:poll:1",
                payload_json='{"pending_id": "poll:1"}',
                status=None,
                attempts=0,
                not_before=now - timedelta(days=1),
                last_error="",
                created_at=now,
                updated_at=now,
            )
        )


@pytest.mark.parametrize("state", [None, "pending"])
def test_a_card_of_an_unknown_kind_is_left_alone_and_reported(
    store: Database, clock: FakeClock, state: str | None
) -> None:
    _insert_unknown(store, clock, state=state)
    assert store.cards.get("poll:1") is None
    assert store.cards.pending() == [] and store.cards.pending_ids() == []
    assert store.cards.unposted(older_than_s=0) == []
    assert store.cards.recent_resolved() == []
    assert store.cards.many(["poll:1"]) == []
    at = datetime(2030, 1, 1, tzinfo=UTC)
    assert not store.cards.transition("poll:1", CardOutcome(state=CardState.ENDED, at=at))
    assert store.outbox.outbox_take(None, limit=5, worker_id="w1") == []
    # What the database holds (db status, metrics): every kind's waiting card and write.
    assert (store.stats().pending_cards, store.stats().outbox_pending) == (1, 1)
    reason = store.newer_than_this()
    assert reason == "cards of kinds this release does not know, left alone: 1 poll"
    with store.sql.engine.connect() as conn:
        row = conn.execute(select(cards).where(cards.c.pending_id == "poll:1")).one()
        assert (row.state, row.outcome_json) == (state, None)


def test_a_resolved_card_of_an_unknown_kind_is_never_purged(
    store: Database, clock: FakeClock
) -> None:
    _insert_unknown(store, clock, state="answered")
    store.retention.purge(timedelta(days=1))
    with store.sql.engine.connect() as conn:
        assert conn.scalar(select(cards.c.kind).where(cards.c.pending_id == "poll:1")) == "poll"
    assert store.newer_than_this() is None  # reported while it waits only


def test_a_newer_schema_is_reported(store: Database, open_store: Callable[..., Database]) -> None:
    assert store.newer_than_this() is None
    with store.sql.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": "0099"})
    running = open_store(upgrade=False)  # as a replica that started before the newer one
    assert running.newer_than_this() == (
        f"the database's schema version 99 is newer than this release's ({SCHEMA_VERSION}): "
        "a newer release runs beside it"
    )


def test_healthz_says_so(store: Database, clock: FakeClock) -> None:
    health = Health()
    health.watch("newer_release", store.newer_than_this)  # as kandev_slack/app.py does
    assert health.report().ok
    _insert_unknown(store, clock, state=None)
    assert store.newer_than_this() is None  # the same replica's reading is kept up to 30 s
    report = Health()
    fresh = Database(store.url, clock=clock, upgrade=False)
    try:
        report.watch("newer_release", fresh.newer_than_this)
        assert report.report().as_json()["status"] == "degraded"
        assert report.report().reasons == (
            "newer_release: cards of kinds this release does not know, left alone: 1 poll",
        )
    finally:
        fresh.close()


@pytest.mark.parametrize(
    ("before", "hidden"),
    [("0010", True), ("0013", False)],
    ids=["from-before-approvals", "from-the-deployed-release"],
)
def test_version_15_hides_the_waiting_approvals_from_a_release_before_them(
    db_url: str, before: str, hidden: bool
) -> None:
    engine = make_engine(normalize_url(db_url))
    try:
        assert migrate(engine, before) == int(before)
        at = datetime(2030, 1, 1, tzinfo=UTC)
        waiting, done = _approval("req-w"), _approval("req-d")
        with engine.begin() as conn:
            for item, state in ((waiting, "pending"), (done, "answered"), (None, "pending")):
                key = approval_key(item.request_id) if item else "p-question"
                stored = (
                    item.model_dump_json()
                    if item
                    else make_bundle(pending_id=key).model_dump_json()
                )
                conn.execute(
                    text(
                        "INSERT INTO cards (pending_id, task_id, session_id, workspace_id, "
                        "channel, state, bundle_json, task_json, claimed_at, created_at, "
                        "updated_at) VALUES (:k, 't', 's', 'w', 'C1', :state, :item, "
                        '\'{"task_id": "t"}\', :at, :at, :at)'
                    ),
                    {"k": key, "state": state, "item": stored, "at": at},
                )
                conn.execute(
                    text(
                        "INSERT INTO outbox (kind, dedupe_key, payload_json, status, attempts, "
                        "not_before, last_error, created_at, updated_at) VALUES ('update', :d, "
                        ":p, 'pending', 0, :at, '', :at, :at)"
                    ),
                    {"d": f"update:{key}", "p": json.dumps({"pending_id": key}), "at": at},
                )
        assert migrate(engine) == SCHEMA_VERSION
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT pending_id, kind, state, claimed_at FROM cards ORDER BY pending_id")
            ).all()
            writes = conn.execute(
                text("SELECT dedupe_key, item_kind, status FROM outbox ORDER BY dedupe_key")
            ).all()
        waiting = (None, True) if hidden else ("pending", False)
        assert [(r.pending_id, r.kind, r.state, r.claimed_at is None) for r in rows] == [
            ("p-question", "question", "pending", False),
            ("perm:req-d", "approval", "answered", False),
            ("perm:req-w", "approval", *waiting),
        ]
        assert [tuple(w) for w in writes] == [
            ("update:p-question", "question", "pending"),
            ("update:perm:req-d", "approval", None if hidden else "pending"),
            ("update:perm:req-w", "approval", None if hidden else "pending"),
        ]
    finally:
        engine.dispose()


#: What the deployed release (2f49d25, schema version 13) inserts, verbatim in its columns: no
#: kind (the column's default then says 'question'), state 'pending'.
DEPLOYED_CARD = (
    "INSERT INTO cards (pending_id, task_id, session_id, workspace_id, channel, ts, state, "
    "bundle_json, task_json, claimed_at, created_at, updated_at) VALUES (:k, 'task-a', "
    "'session-a', 'w', 'C1', NULL, 'pending', :item, '{\"task_id\": \"task-a\"}', :at, :at, :at)"
)
DEPLOYED_WRITE = (
    "INSERT INTO outbox (kind, dedupe_key, channel, payload_json, status, attempts, "
    "not_before, last_error, created_at, updated_at) VALUES ('post', :d, 'C1', :p, 'pending', "
    "0, :at, '', :at, :at)"
)


def test_what_the_deployed_release_stores_after_the_upgrade_is_read_as_what_it_is(
    db_url: str, open_store: Callable[..., Database], clock: FakeClock
) -> None:
    store = _upgraded_from(db_url, "0013", open_store, clock)
    # This release's approval waits as 'pending': the deployed release reads it (a NULL state
    # failed each of its cycles) and leaves it to its own approvals loop.
    mine = _approval("req-mine")
    mine_key = approval_key(mine.request_id)
    assert store.cards.record_card(NewCard(mine, make_task("task-a"), "C1"))
    seen = _previous_release_sees(store)
    assert mine_key in seen["reconciler, reminders, listing, Home"]

    # The deployed release's own approval and question, as it inserts them.
    theirs = _approval("req-theirs")
    key = approval_key(theirs.request_id)
    at = datetime(2030, 1, 1, tzinfo=UTC)
    with store.sql.engine.begin() as conn:
        for pending_id, item in (
            (key, theirs.model_dump_json()),
            ("p-old", make_bundle(pending_id="p-old").model_dump_json()),
        ):
            conn.execute(text(DEPLOYED_CARD), {"k": pending_id, "item": item, "at": at})
            payload = json.dumps({"pending_id": pending_id})
            conn.execute(text(DEPLOYED_WRITE), {"d": f"post:{pending_id}", "p": payload, "at": at})
    card = store.cards.get(key)
    assert card is not None and card.approval.request_id == "req-theirs"
    assert card.state is CardState.PENDING
    question = store.cards.get("p-old")
    assert question is not None and question.bundle.pending_id == "p-old"
    # The questions' reconciler does not take the approval for a question (ended Unavailable).
    assert [p for p, _ in store.cards.pending_ids()] == ["p-old"]
    assert [c.pending_id for c in store.cards.pending_of_kind("perm:")] == [key, mine_key]
    taken = store.outbox.outbox_take(None, limit=5, worker_id="w1")
    assert sorted((t.payload["pending_id"], t.item_kind) for t in taken) == [
        ("p-old", "question"),
        (key, "approval"),
    ]
    assert store.newer_than_this() is None
