"""Cards: the posting claim, messages, crash-recovery queries and the state machine."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC

import pytest
from sqlalchemy.exc import IntegrityError

from kandev_slack.core.approval import Approval, ToolAction, ToolOption
from kandev_slack.core.domain import CardState, NewCard
from kandev_slack.store import Database
from tests.kit.factories import answered, make_bundle, make_outcome, make_task, record_card
from tests.kit.fakes import FakeClock

THREADS = 12


def _race(n: int, attempt: Callable[[], bool]) -> list[bool]:
    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda _: attempt(), range(n)))


def test_claim_records_the_card_and_only_once(store: Database, clock: FakeClock) -> None:
    big = make_bundle(pending_id="p1", count=4, task_id="task-1", session_id="session-1")
    claimed_at = clock.now
    assert store.cards.record_card(NewCard(big, make_task(workspace_id="ws-1"), "C1"))
    clock.advance(5)
    assert not record_card(store, "p1", channel="C2")
    card = store.cards.get("p1")
    assert card is not None
    assert (card.pending_id, card.task_id, card.session_id, card.workspace_id) == (
        "p1",
        "task-1",
        "session-1",
        "ws-1",
    )
    assert (card.channel, card.ts, card.state, card.outcome) == (
        "C1",
        None,
        CardState.PENDING,
        None,
    )
    assert card.bundle == big
    assert card.task == make_task()
    assert card.created_at == card.updated_at == claimed_at
    assert card.created_at.tzinfo is UTC
    assert store.cards.get("unknown") is None


def test_claim_race_between_threads_has_one_winner(store: Database) -> None:
    for pending_id in ("p1", "p2", "p3"):
        results = _race(THREADS, lambda pid=pending_id: record_card(store, pid))  # type: ignore[misc]
        assert results.count(True) == 1, results
    assert store.cards.count() == 3


def test_claim_race_between_store_instances_has_one_winner(
    open_store: Callable[..., Database],
) -> None:
    """Separate engines (as separate replicas would have) racing on the same key."""
    stores = [open_store() for _ in range(3)]
    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(lambda n: record_card(stores[n % 3], "p1"), range(THREADS)))
    assert results.count(True) == 1


def test_mark_posted_and_lookup_by_message(store: Database, clock: FakeClock) -> None:
    record_card(store, "p1", channel="C1")
    record_card(store, "p2", channel="C1")
    clock.advance(2)
    assert store.cards.mark_posted("p1", "C1", "1700000000.000100")
    assert not store.cards.mark_posted("unknown", "C1", "1700000000.000200")
    card = store.cards.by_message("C1", "1700000000.000100")
    assert card is not None and card.pending_id == "p1"
    assert card.ts == "1700000000.000100"
    assert card.updated_at == clock.now
    assert store.cards.by_message("C2", "1700000000.000100") is None
    assert store.cards.by_message("C1", "1700000000.999999") is None
    with pytest.raises(IntegrityError):  # two cards can never share one message
        store.cards.mark_posted("p2", "C1", "1700000000.000100")


def test_unposted_lists_claims_without_a_message(store: Database, clock: FakeClock) -> None:
    record_card(store, "old")
    clock.advance(10)
    record_card(store, "new")
    record_card(store, "posted")
    store.cards.mark_posted("posted", "C1", "1.1")
    clock.advance(10)
    assert [c.pending_id for c in store.cards.unposted()] == ["old", "new"]
    assert [c.pending_id for c in store.cards.unposted(older_than_s=15)] == ["old"]
    assert store.cards.unposted(older_than_s=60) == []


def test_transition_is_compare_and_set(store: Database, clock: FakeClock) -> None:
    record_card(store, "p1")
    clock.advance(3)
    outcome = answered("U1")
    assert store.cards.transition("p1", outcome)
    assert not store.cards.transition("p1", answered("U2"))  # no longer pending
    card = store.cards.get("p1")
    assert card is not None
    assert (card.state, card.outcome, card.updated_at) == (CardState.ANSWERED, outcome, clock.now)
    ended = make_outcome(CardState.ENDED)
    assert not store.cards.transition("p1", ended, expected=CardState.REJECTED)
    assert store.cards.transition("p1", ended, expected=CardState.ANSWERED)
    assert store.cards.get("p1").state is CardState.ENDED  # type: ignore[union-attr]
    assert not store.cards.transition("unknown", ended)
    with pytest.raises(ValueError, match="pending"):
        store.cards.transition("p1", make_outcome(CardState.PENDING), CardState.ENDED)


def test_transition_race_has_exactly_one_winner(store: Database) -> None:
    record_card(store, "p1")
    users = iter(f"U{n}" for n in range(THREADS))
    outcomes = [answered(next(users)) for _ in range(THREADS)]
    with ThreadPoolExecutor(THREADS) as pool:
        wins = list(pool.map(lambda o: store.cards.transition("p1", o), outcomes))
    assert wins.count(True) == 1
    winner = outcomes[wins.index(True)]
    assert store.cards.get("p1").outcome == winner  # type: ignore[union-attr]


def test_pending_resolved_and_counts(store: Database, clock: FakeClock) -> None:
    for pending_id in ("a", "b", "c", "d"):
        record_card(store, pending_id)
        clock.advance(1)
    store.cards.transition("c", answered("U1"))
    clock.advance(1)
    store.cards.transition("a", make_outcome(CardState.REJECTED, reason="no"))
    assert [c.pending_id for c in store.cards.pending()] == ["b", "d"]
    assert store.cards.pending_ids() == [
        (c.pending_id, c.created_at) for c in store.cards.pending()
    ]
    assert [c.pending_id for c in store.cards.recent_resolved(10)] == ["a", "c"]
    assert [c.pending_id for c in store.cards.recent_resolved(1)] == ["a"]
    [recent] = store.cards.recent_resolved(1)
    assert recent.task == store.cards.get("a").task  # the task, without the card
    # The shown ones read whole, in the order asked, those it does not know left out.
    many = store.cards.many(["c", "nope", "a"])
    assert [c.pending_id for c in many] == ["c", "a"]
    assert many == [store.cards.get("c"), store.cards.get("a")]
    assert store.cards.many([]) == []
    assert store.cards.count() == 4
    assert store.cards.count(CardState.PENDING) == 2
    assert store.cards.count(CardState.REJECTED) == 1


def test_an_approval_is_kept_as_its_card_s_item_and_kept_apart(store: Database) -> None:
    approval = Approval(
        task_id="task-9",
        session_id="session-9",
        request_id="req-9",
        pending_id="agentctl-9",
        created_at=make_bundle().created_at,
        action=ToolAction(type="command", command="make", cwd="/r"),
        options=(ToolOption(option_id="allow_once", name="Allow once", kind="allow_once"),),
        cancellation_revision=2,
    )
    assert record_card(store, "p-question")
    assert store.cards.record_card(NewCard(approval, make_task("task-9"), "C1"))
    assert not store.cards.record_card(NewCard(approval, make_task("task-9"), "C2"))
    card = store.cards.get("perm:req-9")
    assert card is not None and card.approval == approval and card.kind.value == "approval"
    assert [c.pending_id for c in store.cards.pending_of_kind("perm:")] == ["perm:req-9"]
    assert [p for p, _ in store.cards.pending_ids()] == ["p-question"]  # questions only
