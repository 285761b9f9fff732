""" "I'm on it" in the store (SQLite and PostgreSQL): a claim changes once per card as read,
never on a resolved card, with its writes enqueued with it; it is read back exactly as written
(the next change compares against it) and found once it ran out."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from kandev_slack.core.claims import new_claim
from kandev_slack.core.domain import Card
from kandev_slack.store import Database
from kandev_slack.store.cards.followups import OutboxRow
from tests.kit.factories import answered, record_card
from tests.kit.fakes import FakeClock


def edit(key: str) -> OutboxRow:
    return OutboxRow("update", f"update:p1:pending:{key}", {"pending_id": "p1"}, "C1")


def waiting_card(store: Database) -> Card:
    record_card(store, "p1")
    store.cards.mark_posted("p1", "C1", "1.1")
    card = store.claims.claimed_card("p1")
    assert card is not None and card.claim is None and card.paused_s == 0.0
    return card


def test_people_taking_the_same_card_as_read_have_one_winner(store: Database) -> None:
    read = waiting_card(store)
    now = store.claims.claim_now()

    def take(i: int) -> bool:
        return store.claims.set_claim(read, new_claim(f"U{i}", now, 1800), 0.0, [edit(f"u{i}")])

    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(take, range(8)))
    assert won.count(True) == 1
    assert len(store.outbox.outbox_take(None, 10, "w")) == 1
    held = store.claims.claimed_card("p1")
    assert held is not None and held.claim is not None
    assert held.claim.user_id == f"U{won.index(True)}"


def test_a_claim_reads_back_as_written_so_the_next_change_can_compare(
    store: Database, clock: FakeClock
) -> None:
    read = waiting_card(store)
    taken = new_claim("U0ANA", store.claims.claim_now(), 1800)
    assert store.claims.set_claim(read, taken, 0.0, [])
    held = store.claims.claimed_card("p1")
    assert held is not None and held.claim == taken
    assert not store.claims.set_claim(read, None, 0.0, [])  # read before the claim: stale
    clock.advance(60)
    assert store.claims.set_claim(held, None, 60.0, [edit("free")])
    free = store.claims.claimed_card("p1")
    assert free is not None and free.claim is None and free.paused_s == 60.0


def test_nothing_changes_on_a_resolved_card(store: Database) -> None:
    read = waiting_card(store)
    store.cards.transition("p1", answered("U1"))
    taken = new_claim("U0ANA", store.claims.claim_now(), 1800)
    assert not store.claims.set_claim(read, taken, 0.0, [edit("late")])
    assert store.outbox.outbox_take(None, 10, "w") == []


def test_a_claim_is_found_once_it_ran_out(store: Database, clock: FakeClock) -> None:
    read = waiting_card(store)
    assert store.claims.next_lapse_s() is None  # nobody is on anything
    taken = new_claim("U0ANA", store.claims.claim_now(), 1800)
    assert store.claims.set_claim(read, taken, 0.0, [])
    assert store.claims.next_lapse_s() == 1800.0
    clock.advance(1799)
    assert store.claims.lapsed_claims() == []
    assert store.claims.next_lapse_s() == 1.0
    clock.advance(1)
    assert store.claims.next_lapse_s() == 0.0
    (lapsed,) = store.claims.lapsed_claims()
    assert lapsed.claim == taken and lapsed.claim.until == taken.since + timedelta(minutes=30)
