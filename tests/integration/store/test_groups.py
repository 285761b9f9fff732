"""Identical items in the store (SQLite and PostgreSQL): ``CardsRepository.same_item`` finds
the posted cards of one identity key in one channel that wait — and, asked for, those resolved
since a given card was — oldest first; ``first_waiting`` the card a new one goes in the thread
of; ``set_thread`` records it once; ``in_thread`` lists those waiting there."""

from __future__ import annotations

from sqlalchemy import text

from kandev_slack.core.domain import CardState, NewCard
from kandev_slack.kinds.registry import spec_of
from kandev_slack.store import Database
from tests.kit.factories import make_bundle, make_outcome, make_question, make_task
from tests.kit.fakes import FakeClock

PROMPT = "Which database?"
KEY = str(spec_of("question").identity_key(make_bundle(make_question(prompt=PROMPT)), "ws-1"))


def _card(
    store: Database,
    pending_id: str,
    *,
    prompt: str = PROMPT,
    channel: str = "C1",
    ts: str | None = None,
) -> None:
    bundle = make_bundle(make_question(prompt=prompt), pending_id=pending_id, task_id=pending_id)
    task = make_task(bundle.task_id, workspace_id="ws-1")
    assert store.cards.record_card(NewCard(bundle, task, channel))
    if ts is not None:
        assert store.cards.mark_posted(pending_id, channel, ts)


def _ids(cards) -> list[str]:
    return [c.pending_id for c in cards]


def test_the_waiting_posted_cards_of_one_question_in_one_channel(
    store: Database, clock: FakeClock
) -> None:
    _card(store, "p1", ts="1.1")
    clock.advance(1)
    _card(store, "p2", ts="1.2")
    clock.advance(1)
    _card(store, "p3", ts="1.3")
    _card(store, "unposted")
    _card(store, "elsewhere", channel="C2", ts="1.4")
    _card(store, "another", prompt="Which cache?", ts="1.5")
    assert _ids(store.cards.same_item(KEY, "C1")) == ["p1", "p2", "p3"]
    assert _ids(store.cards.same_item(KEY, "C1", exclude="p2")) == ["p1", "p3"]
    assert _ids(store.cards.same_item(KEY, "C1", limit=2)) == ["p1", "p2"]
    # Whom an offer names: the same ids, no card read whole.
    assert store.cards.same_item_ids(KEY, "C1") == ["p1", "p2", "p3"]
    assert store.cards.same_item_ids(KEY, "C1", exclude="p2") == ["p1", "p3"]
    assert store.cards.same_item_ids(KEY, "C1", limit=2) == ["p1", "p2"]
    assert store.cards.same_item_ids(KEY, "C3") == []


def test_resolved_cards_count_only_when_resolved_since_the_given_card(
    store: Database, clock: FakeClock
) -> None:
    for n in (1, 2, 3, 4):
        _card(store, f"p{n}", ts=f"1.{n}")
    answered = make_outcome(CardState.ANSWERED, via="slack", by_user="U0ANA")
    assert store.cards.transition("p1", answered)  # before the source was answered
    clock.advance(5)
    assert store.cards.transition("p2", answered)  # the source
    clock.advance(5)
    assert store.cards.transition("p3", make_outcome(CardState.ENDED))  # meanwhile
    assert _ids(store.cards.same_item(KEY, "C1", exclude="p2")) == ["p4"]
    assert store.cards.same_item_ids(KEY, "C1", exclude="p2") == ["p4"]  # waiting only
    found = store.cards.same_item(KEY, "C1", exclude="p2", resolved_since_of="p2")
    assert _ids(found) == ["p3", "p4"]
    assert _ids(store.cards.same_item(KEY, "C1", resolved_since_of="nobody")) == ["p4"]


def test_the_first_waiting_card_is_the_oldest_in_no_thread_and_a_thread_is_set_once(
    store: Database, clock: FakeClock
) -> None:
    _card(store, "p1")
    clock.advance(1)
    _card(store, "p2")
    clock.advance(1)
    _card(store, "p3")
    _card(store, "elsewhere", channel="C2")
    p1, p2, p3 = (store.cards.get(p) for p in ("p1", "p2", "p3"))
    assert p1 and p2 and p3
    assert store.cards.first_waiting(KEY, "C1", p1) is None  # the first: its own card
    first = store.cards.first_waiting(KEY, "C1", p3)
    assert first is not None and first.pending_id == "p1" and first.ts is None  # waited for
    assert store.cards.mark_posted("p1", "C1", "1.1")
    assert store.cards.set_thread("p2", "p1", "1.1")
    assert not store.cards.set_thread("p2", "p3", "1.3")  # once
    assert store.cards.mark_posted("p2", "C1", "1.2")
    again = store.cards.get("p2")
    assert again is not None and (again.thread_of, again.thread_ts) == ("p1", "1.1")
    assert _ids(store.cards.in_thread("p1")) == ["p2"]
    # The first resolved: a later identical item is the first of its own.
    assert store.cards.transition("p1", make_outcome(CardState.ANSWERED))
    assert store.cards.first_waiting(KEY, "C1", p3) is None
    assert _ids(store.cards.in_thread("p1")) == ["p2"]  # still waiting there


def test_a_first_card_whose_post_was_given_up_holds_no_one(
    store: Database, clock: FakeClock
) -> None:
    """Its identical items would wait for its post forever: the next one is the first then."""
    _card(store, "p1")
    clock.advance(1)
    _card(store, "p2")
    clock.advance(1)
    _card(store, "p3")
    p3 = store.cards.get("p3")
    assert p3 is not None
    store.outbox.outbox_put("post", "post:p1", {"pending_id": "p1"}, channel="C1")
    (taken,) = store.outbox.outbox_take(None, 10, "w1")
    assert store.outbox.outbox_fail(taken.id, "given up", worker_id="w1")
    first = store.cards.first_waiting(KEY, "C1", p3)
    assert first is not None and first.pending_id == "p2"


def test_a_first_card_that_cannot_be_read_back_is_found_all_the_same(
    store: Database, clock: FakeClock
) -> None:
    """Only its id and message are read: its broken row fails its own post, not theirs."""
    _card(store, "p1", ts="1.1")
    clock.advance(1)
    _card(store, "p2")
    p2 = store.cards.get("p2")
    assert p2 is not None
    with store.sql.engine.begin() as conn:
        conn.execute(text("UPDATE cards SET bundle_json = '{' WHERE pending_id = 'p1'"))
    first = store.cards.first_waiting(KEY, "C1", p2)
    assert first is not None and (first.pending_id, first.ts) == ("p1", "1.1")
