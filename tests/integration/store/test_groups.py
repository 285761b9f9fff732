"""A group of identical questions in the store (SQLite and PostgreSQL):
``CardsRepository.same_question`` finds the posted cards of one question key in one channel
that wait — and, asked for, those resolved since a given card was — oldest first."""

from __future__ import annotations

from kandev_slack.core.domain import CardState, NewCard
from kandev_slack.store import Database
from tests.kit.factories import make_bundle, make_outcome, make_task
from tests.kit.fakes import FakeClock

KEY = "key-which-database"


def _card(
    store: Database, pending_id: str, *, key: str = KEY, channel: str = "C1", ts: str | None = None
) -> None:
    bundle = make_bundle(pending_id=pending_id, task_id=f"t-{pending_id}")
    assert store.cards.record_card(
        NewCard(bundle, make_task(bundle.task_id), channel, question_key=key)
    )
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
    _card(store, "another", key="key-which-cache", ts="1.5")
    assert _ids(store.cards.same_question(KEY, "C1")) == ["p1", "p2", "p3"]
    assert _ids(store.cards.same_question(KEY, "C1", exclude="p2")) == ["p1", "p3"]
    assert _ids(store.cards.same_question(KEY, "C1", limit=2)) == ["p1", "p2"]


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
    assert _ids(store.cards.same_question(KEY, "C1", exclude="p2")) == ["p4"]
    found = store.cards.same_question(KEY, "C1", exclude="p2", resolved_since_of="p2")
    assert _ids(found) == ["p3", "p4"]
    assert _ids(store.cards.same_question(KEY, "C1", resolved_since_of="nobody")) == ["p4"]
