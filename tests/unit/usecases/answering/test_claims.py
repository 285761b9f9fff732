""" "I'm on it" (kandev_slack/usecases/answering/claims.py) on a store whose clock the test moves:
taking, taking
over, renewing and releasing a card each change its claim once and edit its messages to show
it; a claim pauses the card's reminders and escalation and lapses at its end, once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from kandev_slack.config.followups import FollowUps
from kandev_slack.config.routing import Routing
from kandev_slack.core.domain import Card
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.admission import Admission, Admitted, Request
from kandev_slack.usecases.answering.claims import (
    Claims,
    Contended,
    NotClaimed,
    NotHolder,
    OnIt,
    Redelivered,
    Released,
)
from kandev_slack.usecases.followups.reminders import FollowUpWorker
from kandev_slack.usecases.outbox.publisher import Publisher
from tests.kit.factories import ALICE_ID, CHANNEL
from tests.kit.fakes import FakeClock, FakeSlackGateway

BOB_ID = "U0BOB00001"
FOLLOWUPS = FollowUps(
    remind_after=600, escalate_after=3600, escalate_to="C0LEADS01", claim_for=1800
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 12, 1, 10, 0, tzinfo=UTC))


@pytest.fixture
def routing() -> Routing:
    return Routing(default_channel=CHANNEL, default_followups=FOLLOWUPS)


@pytest.fixture
def claims(store: Database, answerers: Answerers, publisher: Publisher) -> Claims:
    return Claims(store.claims, store.cards, store.audit_log, answerers.claim_for, publisher.wake)


def on_card(card: Card, user: str, action: str = "claim", **changes: object) -> Request:
    """The person's click of ``action`` on the card's message (as Slack describes it)."""
    fields: dict = {
        "user_id": user,
        "action": action,
        "source": "slack:button",
        "via": "card",
        "pending_id": card.pending_id,
        "channel": card.channel,
        "ts": card.ts,
    }
    return Request(**{**fields, **changes})


@pytest.fixture
def click(admission: Admission, claims: Claims, store: Database):
    """``click(card, user, release=False)``: the person's "I'm on it" / "Take over" (or
    "Release") on the card's message, admitted, and its result."""

    def click_(card: Card, user: str, *, release: bool = False):
        admitted = admission.admit(on_card(card, user, "release" if release else "claim"))
        assert isinstance(admitted, Admitted), admitted
        return claims.release(admitted) if release else claims.take(admitted)

    return click_


@pytest.fixture
def worker(store: Database, answerers: Answerers, publisher: Publisher, claims: Claims):
    return FollowUpWorker(store.followups, answerers, publisher, Health(), lapse=claims.lapse_due)


def claim_lines(gateway: FakeSlackGateway) -> list[str]:
    """The "on it" line of each edit of the channel card, in order ("" when none)."""
    lines = []
    for call in gateway.called("chat.update"):
        blocks = call["message"].blocks
        found = [b for b in blocks if b.get("block_id") == "kq_claim"]
        lines.append(found[0]["elements"][0]["text"] if found else "")
    return lines


def quiet_labels(gateway: FakeSlackGateway) -> list[str]:
    blocks = gateway.called("chat.update")[-1]["message"].blocks
    row = next(b for b in blocks if b.get("block_id") == "kq_more")
    # The "More" overflow's options (the card's quiet controls since "one glance").
    return [o["text"]["text"] for e in row["elements"] for o in e.get("options", [e])]


def replies(gateway: FakeSlackGateway) -> list[str]:
    return [c["text"] for c in gateway.called("chat.postMessage:reply")]


def test_taking_a_card_shows_who_is_on_it_and_offers_take_over_and_release(
    card: Card, click, drain, gateway: FakeSlackGateway, store: Database, clock: FakeClock
) -> None:
    result = click(card, ALICE_ID)
    assert isinstance(result, OnIt) and not result.took_from and not result.renewed
    assert result.claim.until == clock() + timedelta(minutes=30)
    drain()
    (line,) = claim_lines(gateway)
    assert line.startswith(f"👀 <@{ALICE_ID}> is on it (since <!date^")
    assert quiet_labels(gateway)[:2] == ["👀 Take over", "Release"]
    stored = store.cards.get(card.pending_id)
    assert stored is not None and stored.claim is not None and stored.claim.user_id == ALICE_ID
    (entry,) = [e for e in store.audit_log.audit_entries() if e.action == "claim"]
    assert (entry.user, entry.result, entry.detail) == (ALICE_ID, "ok", "taken")


def test_another_person_takes_it_over_and_the_thread_says_so(
    card: Card, click, drain, gateway: FakeSlackGateway, clock: FakeClock
) -> None:
    click(card, ALICE_ID)
    drain()
    clock.advance(60)
    result = click(card, BOB_ID)
    assert isinstance(result, OnIt) and result.took_from == ALICE_ID
    drain()
    assert [line.split(" is on it")[0] for line in claim_lines(gateway)] == [
        f"👀 <@{ALICE_ID}>",
        f"👀 <@{BOB_ID}>",
    ]
    assert replies(gateway) == [f"👀 <@{BOB_ID}> took this over from <@{ALICE_ID}>."]


def test_the_holder_clicking_again_renews_it_from_its_start(
    card: Card, click, clock: FakeClock, drain, gateway: FakeSlackGateway
) -> None:
    first = click(card, ALICE_ID)
    drain()
    clock.advance(600)
    result = click(card, ALICE_ID)
    assert isinstance(result, OnIt) and result.renewed
    assert result.claim.until == clock() + timedelta(minutes=30)
    assert result.claim.since == first.claim.since  # the card's line stays as it was
    drain()
    assert len(claim_lines(gateway)) == 1  # so it is not edited again


def test_slacks_redelivery_of_a_click_changes_and_says_nothing(
    card: Card, admission: Admission, claims: Claims, click, store: Database, clock: FakeClock
) -> None:
    first = click(card, ALICE_ID)
    clock.advance(5)
    request = on_card(card, ALICE_ID, redelivery=True)
    admitted = admission.admit(request)
    assert isinstance(admitted, Admitted)
    assert isinstance(claims.take(admitted), Redelivered)
    stored = store.cards.get(card.pending_id)
    assert stored is not None and stored.claim == first.claim
    click(card, ALICE_ID, release=True)
    released = admission.admit(replace(request, action="release"))
    assert isinstance(released, Admitted)
    assert isinstance(claims.release(released), Redelivered)


def test_only_the_holder_releases_it_and_then_nobody_is_on_it(
    card: Card, click, drain, gateway: FakeSlackGateway
) -> None:
    assert isinstance(click(card, ALICE_ID, release=True), NotClaimed)
    click(card, ALICE_ID)
    refused = click(card, BOB_ID, release=True)
    assert isinstance(refused, NotHolder) and refused.holder.user_id == ALICE_ID
    assert isinstance(click(card, ALICE_ID, release=True), Released)
    drain()
    assert claim_lines(gateway)[-1] == ""
    assert quiet_labels(gateway)[0] == "👀 I'm on it"


def test_two_people_taking_the_same_read_card_end_with_one_holder(
    card: Card, admission: Admission, claims: Claims, store: Database
) -> None:
    """Both read the card while nobody was on it; the second write sees the first's claim
    and becomes a take over, never two holders or a lost edit."""
    admitted = [admission.admit(on_card(card, user)) for user in (ALICE_ID, BOB_ID)]
    assert all(isinstance(a, Admitted) for a in admitted)
    first = claims.take(admitted[0])  # type: ignore[arg-type]
    second = claims.take(admitted[1])  # type: ignore[arg-type]
    assert isinstance(first, OnIt) and isinstance(second, OnIt)
    assert second.took_from == ALICE_ID
    stored = store.cards.get(card.pending_id)
    assert stored is not None and stored.claim is not None and stored.claim.user_id == BOB_ID


def test_a_claim_on_a_card_resolved_meanwhile_changes_nothing(
    card: Card, admission: Admission, claims: Claims, alice_answers, store: Database
) -> None:
    admitted = admission.admit(on_card(card, BOB_ID))
    assert isinstance(admitted, Admitted)
    alice_answers(card)
    result = claims.take(admitted)
    assert isinstance(result, Contended) and result.card.state.terminal
    stored = store.cards.get(card.pending_id)
    assert stored is not None and stored.claim is None


def test_a_claim_pauses_the_reminder_and_the_escalation_and_they_resume_after_it(
    card: Card, click, worker: FollowUpWorker, drain, gateway: FakeSlackGateway, clock: FakeClock
) -> None:
    clock.advance(300)  # 5 min waiting, then Alice is on it for 30 min
    click(card, ALICE_ID)
    clock.advance(1799)
    assert worker.work_once() == 0  # the reminder (at 10 min) waits
    clock.advance(1)  # the claim ran out: it lapses, once, and says so in the thread
    assert worker.work_once() == 1
    assert worker.work_once() == 0
    drain()
    assert replies(gateway) == [
        f"⏰ <@{ALICE_ID}>'s claim ran out after 30 min: reminders and escalation resume."
    ]
    assert claim_lines(gateway)[-1] == ""
    clock.advance(299)  # 9 min 59 s of unclaimed waiting
    assert worker.work_once() == 0
    clock.advance(1)
    assert worker.work_once() == 1  # the reminder, 10 min of waiting without anyone on it
    drain()
    assert replies(gateway)[-1].startswith("⏰ Still waiting for an answer after 10 min")


def test_releasing_early_resumes_the_follow_ups_at_once(
    card: Card, click, worker: FollowUpWorker, drain, gateway: FakeSlackGateway, clock: FakeClock
) -> None:
    click(card, ALICE_ID)
    clock.advance(900)
    click(card, ALICE_ID, release=True)
    clock.advance(599)
    assert worker.work_once() == 0
    clock.advance(1)
    assert worker.work_once() == 1


def test_a_claim_lapses_once_across_two_workers(
    card: Card,
    click,
    worker: FollowUpWorker,
    store: Database,
    answerers: Answerers,
    publisher: Publisher,
    claims: Claims,
    clock: FakeClock,
) -> None:
    other = FollowUpWorker(store.followups, answerers, publisher, Health(), lapse=claims.lapse_due)
    click(card, ALICE_ID)
    clock.advance(1800)
    assert worker.work_once() + other.work_once() == 1
    lapsed = [e for e in store.audit_log.audit_entries() if e.action == "claim_lapsed"]
    assert [(e.user, e.result) for e in lapsed] == [(ALICE_ID, "lapsed")]


def test_claim_for_comes_from_the_route(card: Card, claims: Claims, answerers: Answerers) -> None:
    assert answerers.claim_for(card) == 1800


ClickFn = Callable[..., object]
