"""The task's assignee (issue 32 §8): in a route with ``notify_assignee = true``, the Slack
person who linked the Kandev account a task is assigned to gets the DM card of its items (one
DM card a person, subscribed or not; never when they may not answer it) and is the one its
reminders mention, instead of the route's ``mention``. Quiet hours and calm DMs apply to that
DM card as to any other."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

import pytest

from kandev_slack.config.followups import FollowUps
from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.domain import Card
from kandev_slack.core.timing.quiet import QuietHours
from kandev_slack.ops.health import Health
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.followups.reminders import FollowUpWorker
from kandev_slack.usecases.followups.subscriptions import SubscriptionNotifier
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.intake.sync import SyncEngine
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.people import KandevPeople
from tests.kit.factories import ALICE_ID, CHANNEL, make_bundle
from tests.kit.fakes import FakeClock, FakeKandev, FakeSlackGateway

BOB = "U0BOB00002"
ONCALL = "U0ONCALL01"
ANA_KANDEV, BEN_KANDEV = "u-ana", "u-ben"
TOKEN = "kandev_pat_0123abcd_" + "A" * 43
ASSIGNED = f"📌 A task assigned to you in Kandev — first asked in <#{CHANNEL}>"
FOLLOWUPS = FollowUps(remind_after=10, remind_every=5, max_reminders=2, mention=(ONCALL,))
#: Quiet all day long (UTC): every DM card waits for the summary.
ALL_DAY = QuietHours(start=time(0, 0), end=time(23, 59, 59), tz="UTC")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Database]:
    """A store that keeps people's links (a secret key)."""
    opened = Database(
        f"sqlite:///{tmp_path / 'bot.db'}", clock=clock, vault=Vault.from_keys(Vault.new_key())
    )
    opened.links.link(ALICE_ID, ANA_KANDEV, "Ana", "ana@example.com", TOKEN)
    yield opened
    opened.close()


@pytest.fixture
def routing() -> Routing:
    """Assignees notified by default; not in workspace "Mobile"; only Bob may answer
    workspace "Ops"."""
    return Routing(
        default_channel=CHANNEL,
        default_followups=FOLLOWUPS,
        default_identity="linked",
        default_notify_assignee=True,
        rules=(
            RouteRule(
                workspace="Mobile",
                channel=CHANNEL,
                answerers=frozenset(),
                line=1,
                followups=FOLLOWUPS,
                identity="linked",
            ),
            RouteRule(
                workspace="Ops",
                channel=CHANNEL,
                answerers=frozenset({BOB}),
                line=2,
                followups=FOLLOWUPS,
                identity="linked",
                notify_assignee=True,
            ),
        ),
    )


@pytest.fixture
def people(fake_kandev: FakeKandev, identities: Identities) -> KandevPeople:
    return KandevPeople(fake_kandev, identities.slack_user_of)


@pytest.fixture
def notifier(
    store: Database, answerers: Answerers, publisher: Publisher, people: KandevPeople
) -> SubscriptionNotifier:
    return SubscriptionNotifier(store.followups, answerers, publisher, Health(), people=people)


@pytest.fixture
def worker(
    store: Database, answerers: Answerers, publisher: Publisher, people: KandevPeople
) -> FollowUpWorker:
    return FollowUpWorker(store.followups, answerers, publisher, Health(), people=people)


@pytest.fixture
def assigned(
    fake_kandev: FakeKandev, sync: SyncEngine, publisher: Publisher, store: Database
) -> Callable[..., Card]:
    """``assigned(n, to, workspace=…)``: bundle ``n`` of a task assigned to the Kandev user
    ``to`` ("" nobody) is posted; returns its card."""

    def post(n: int, to: str, workspace: str = "Platform") -> Card:
        bundle = make_bundle(distinct(n), pending_id=f"p{n}", task_id=f"t{n}")
        fake_kandev.add(
            bundle, workspace_id=f"ws-{workspace}", workspace_name=workspace, assignee=to
        )
        assert sync.reconcile_once().posted == [bundle.pending_id]
        assert publisher.work_once()
        card = store.cards.get(bundle.pending_id)
        assert card is not None and card.ts is not None
        return card

    return post


def distinct(n: int) -> dict[str, Any]:
    """A question no other ``n`` asks (identical ones share a card's thread)."""
    return {
        "question_id": "db",
        "title": f"Database #{n}",
        "prompt": f"Which database should service #{n} use?",
        "options": [{"option_id": "pg", "label": "PostgreSQL"}],
    }


def dm_cards(store: Database, card: Card) -> list[tuple[str, str]]:
    return [(m.target, m.note) for m in store.cards.messages_of(card.pending_id) if m.kind == "dm"]


def test_the_linked_assignee_gets_one_dm_card_with_why_it_came(
    assigned, store: Database, notifier: SubscriptionNotifier, drain, gateway: FakeSlackGateway
) -> None:
    store.followups.subscribe(ALICE_ID, "all")  # subscribed too: still one DM card
    store.followups.subscribe(BOB, "all")
    card = assigned(1, ANA_KANDEV)

    assert notifier.work_once() == 2
    notes = dict(dm_cards(store, card))
    assert notes[ALICE_ID] == ASSIGNED
    assert notes[BOB].startswith("🔔 Every new question you may answer (you subscribed)")
    drain()
    posted = [c for c in gateway.called("chat.postMessage") if c["channel"].startswith("D")]
    assert sorted(c["channel"] for c in posted) == sorted(["D" + ALICE_ID[1:], "D" + BOB[1:]])
    assert notifier.work_once() == 0  # once


def test_no_dm_card_for_an_assignee_not_linked_in_another_route_or_who_may_not_answer(
    assigned, store: Database, notifier: SubscriptionNotifier
) -> None:
    bens = assigned(1, BEN_KANDEV)  # Ben never linked his Kandev account
    nobody = assigned(2, "")
    mobile = assigned(3, ANA_KANDEV, workspace="Mobile")  # a route without notify_assignee
    ops = assigned(4, ANA_KANDEV, workspace="Ops")  # only Bob may answer there

    assert notifier.work_once() == 0
    for card in (bens, nobody, mobile, ops):
        assert dm_cards(store, card) == []


def test_the_assignee_is_read_from_kandev_now_else_as_the_card_was_made(
    assigned, store: Database, fake_kandev: FakeKandev, notifier: SubscriptionNotifier
) -> None:
    card = assigned(1, "")
    fake_kandev.assign(card.task_id, ANA_KANDEV)  # assigned after the card was made
    assert notifier.work_once() == 1
    assert dm_cards(store, card) == [(ALICE_ID, ASSIGNED)]

    other = assigned(2, ANA_KANDEV)
    fake_kandev.fail("task")  # Kandev cannot say now: the card's own record tells
    assert notifier.work_once() == 1
    assert dm_cards(store, other) == [(ALICE_ID, ASSIGNED)]


def test_quiet_hours_hold_the_assignees_dm_card(
    assigned, store: Database, notifier: SubscriptionNotifier
) -> None:
    store.followups.quiet_set(ALICE_ID, ALL_DAY)  # her own quiet hours
    card = assigned(1, ANA_KANDEV)

    assert notifier.work_once() == 0
    assert dm_cards(store, card) == []
    assert store.followups.held_due() == []  # held until her quiet hours end
    store.followups.quiet_clear(ALICE_ID)
    assert store.followups.held_due() == [ALICE_ID]


def test_calm_dms_gather_a_burst_of_the_assignees_dm_cards(
    assigned, store: Database, notifier: SubscriptionNotifier
) -> None:
    cards = [assigned(n, ANA_KANDEV) for n in range(5)]

    assert notifier.work_once() == 5
    threads = [
        [m.thread for m in store.cards.messages_of(card.pending_id) if m.kind == "dm"]
        for card in cards
    ]
    # Three alone, then the fourth opens a gathering DM whose thread the fifth joins.
    assert threads[:3] == [[None]] * 3
    assert threads[3] == threads[4] and threads[3][0] is not None
    assert threads[3][0].startswith(f"gather:{ALICE_ID}:")


def test_reminders_mention_the_linked_assignee_instead_of_the_routes_mention(
    assigned,
    clock: FakeClock,
    fake_kandev: FakeKandev,
    worker: FollowUpWorker,
    drain,
    gateway: FakeSlackGateway,
) -> None:
    anas = assigned(1, ANA_KANDEV)
    bens = assigned(2, BEN_KANDEV)  # not linked: the route's mention
    mobile = assigned(3, ANA_KANDEV, workspace="Mobile")  # no notify_assignee there
    ops = assigned(4, ANA_KANDEV, workspace="Ops")  # Ana may not answer there
    clock.advance(10)

    assert worker.work_once() == 4
    drain()
    by_thread = {c["thread_ts"]: c["text"] for c in gateway.called("chat.postMessage:reply")}
    assert by_thread[anas.ts].endswith(f"<@{ALICE_ID}>") and ONCALL not in by_thread[anas.ts]
    for card in (bens, mobile, ops):
        assert by_thread[card.ts].endswith(f"<@{ONCALL}>"), card.pending_id

    # Reassigned in Kandev (to nobody): the next reminder goes to the route's mention again.
    fake_kandev.assign(anas.task_id, "")
    clock.advance(5)
    assert worker.work_once() == 4
    drain()
    (second,) = [
        c["text"] for c in gateway.called("chat.postMessage:reply")[4:] if c["thread_ts"] == anas.ts
    ]
    assert second.endswith(f"<@{ONCALL}>") and ALICE_ID not in second
