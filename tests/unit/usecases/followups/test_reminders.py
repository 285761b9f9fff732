"""Reminders and escalation of waiting cards, on a store whose clock the test moves: each step
once, at its time, with its mentions; a step missed while down is sent once; never for a
resolved bundle."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from kandev_slack.config.followups import FollowUps
from kandev_slack.config.routing import Routing
from kandev_slack.core.domain import Card
from kandev_slack.ops.health import Health
from kandev_slack.slack_api.gateway import SlackError
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.followups.reminders import FollowUpWorker
from kandev_slack.usecases.intake.sync import SyncEngine
from kandev_slack.usecases.outbox import publisher as publisher_module
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.wiring import build_publisher
from tests.kit.factories import CHANNEL, KANDEV_URL, make_bundle
from tests.kit.fakes import FakeClock, FakeKandev, FakeMonotonic, FakeSlackGateway

LEADS = "C0LEADS0001"
LEAD = "U0LEAD0001"
FOLLOWUPS = FollowUps(
    remind_after=10,
    remind_every=5,
    max_reminders=3,
    mention=("S0ONCALL", "U0ANA"),
    escalate_after=30,
    escalate_to=LEADS,
    escalate_mention=("S0LEADS",),
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))


@pytest.fixture
def followups() -> FollowUps:
    return FOLLOWUPS


@pytest.fixture
def routing(followups: FollowUps) -> Routing:
    return Routing(default_channel=CHANNEL, default_followups=followups)


@pytest.fixture
def worker(store: Database, answerers: Answerers, publisher: Publisher) -> FollowUpWorker:
    return FollowUpWorker(store.followups, answerers, publisher, Health())


@pytest.fixture
def tick(worker: FollowUpWorker, drain: Callable[[], None]) -> Callable[[], int]:
    """``tick()``: the follow-ups due now are claimed and sent; returns how many were claimed."""

    def tick_() -> int:
        claimed = worker.work_once()
        drain()
        return claimed

    return tick_


@pytest.fixture
def reminders_waiting(posted, clock: FakeClock, worker: FollowUpWorker) -> Callable[[int], None]:
    """``reminders_waiting(n)``: ``n`` cards posted, and their first reminders claimed and
    enqueued (not sent yet)."""

    def enqueue(n: int) -> None:
        waiting = [posted(make_bundle(pending_id=f"p{i}", task_id=f"t{i}")) for i in range(n)]
        at(clock, waiting[-1], 10)
        assert worker.work_once() == n

    return enqueue


@pytest.fixture
def new_bundle_found(fake_kandev: FakeKandev, sync: SyncEngine) -> Callable[[], None]:
    """``new_bundle_found()``: a new bundle is listed, and sync claims it and queues its post."""

    def find() -> None:
        fake_kandev.add(make_bundle(pending_id="new", task_id="t-new"))
        assert sync.reconcile_once().posted == ["new"]

    return find


def replies(gateway: FakeSlackGateway) -> list[str]:
    return [c["text"] for c in gateway.called("chat.postMessage:reply")]


def at(clock: FakeClock, card: Card, seconds: float) -> None:
    """Move the clock to ``seconds`` after the card was claimed."""
    clock.advance((card.created_at - clock()).total_seconds() + seconds)


def test_reminders_come_at_their_times_in_the_thread_with_the_mentions(
    card: Card, clock: FakeClock, tick, gateway: FakeSlackGateway
) -> None:
    at(clock, card, 9.9)
    assert tick() == 0 and replies(gateway) == []
    at(clock, card, 10)
    assert tick() == 1
    assert tick() == 0  # once per step
    assert replies(gateway) == [
        "⏰ Still waiting for an answer after 10 s: *“Which database should we use?”* "
        "<!subteam^S0ONCALL> <@U0ANA>"
    ]
    (call,) = gateway.called("chat.postMessage:reply")
    assert (call["channel"], call["thread_ts"]) == (CHANNEL, card.ts)
    at(clock, card, 15)
    tick()
    at(clock, card, 20)
    tick()
    at(clock, card, 29)
    tick()
    assert [r.split(" <")[0] for r in replies(gateway)] == [
        "⏰ Still waiting for an answer after 10 s: *“Which database should we use?”*",
        "⏰ Still waiting for an answer after 15 s: *“Which database should we use?”*",
        "⏰ Still waiting for an answer after 20 s: *“Which database should we use?”*",
    ]  # max_reminders = 3


def test_reminders_missed_while_down_are_sent_once(
    card: Card, clock: FakeClock, tick, gateway: FakeSlackGateway
) -> None:
    at(clock, card, 17)  # steps 1 and 2 were both due
    assert tick() == 1
    assert tick() == 0
    assert [r.split(" <")[0] for r in replies(gateway)] == [
        "⏰ Still waiting for an answer after 15 s: *“Which database should we use?”*"
    ]
    at(clock, card, 20)
    assert tick() == 1 and len(replies(gateway)) == 2


def test_two_workers_claim_each_step_once(
    card: Card,
    store: Database,
    answerers: Answerers,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    drain,
    gateway: FakeSlackGateway,
) -> None:
    other = FollowUpWorker(store.followups, answerers, publisher, Health())
    at(clock, card, 30)
    assert worker.work_once() == 2  # the reminder and the escalation
    assert other.work_once() == 0
    drain()
    assert len(replies(gateway)) == 2
    assert len([c for c in gateway.called("chat.postMessage") if c["channel"] == LEADS]) == 1


def test_no_reminder_for_a_resolved_bundle_even_one_already_enqueued(
    card: Card,
    clock: FakeClock,
    worker: FollowUpWorker,
    tick,
    drain,
    gateway: FakeSlackGateway,
    alice_answers,
) -> None:
    at(clock, card, 10)
    assert worker.work_once() == 1  # claimed and enqueued, not sent yet
    alice_answers(card)
    drain()
    at(clock, card, 100)
    assert tick() == 0
    assert replies(gateway) == []
    assert gateway.called("chat.postMessage:reply") == []


def test_escalation_posts_the_card_there_and_a_notice_under_the_original(
    card: Card, clock: FakeClock, tick, drain, gateway: FakeSlackGateway, alice_answers
) -> None:
    at(clock, card, 30)
    tick()
    assert "🔺 Escalated to <#C0LEADS0001>" in replies(gateway)
    (esc,) = [c for c in gateway.called("chat.postMessage") if c["channel"] == LEADS]
    assert esc["message"].blocks[0]["text"]["text"] == (
        f"🔺 *Escalated* · first asked in <#{CHANNEL}> <!subteam^S0LEADS>"
    )
    # its notification says so before the question
    assert esc["message"].text.startswith("🔺 Escalated · Which database")
    assert any(b["type"] == "actions" for b in esc["message"].blocks)  # interactive
    at(clock, card, 300)
    assert tick() == 0  # once
    alice_answers(card)
    drain()
    assert {c["channel"] for c in gateway.called("chat.update")} == {CHANNEL, LEADS}
    assert len(gateway.called("chat.update")) == 2


@pytest.mark.parametrize(
    "followups", [FollowUps(escalate_after=5, escalate_to=LEAD)], ids=["to-a-person"]
)
def test_escalation_to_a_person_is_a_direct_message(
    card: Card, store: Database, clock: FakeClock, tick, gateway: FakeSlackGateway
) -> None:
    at(clock, card, 5)
    tick()
    assert gateway.called("conversations.open") == [{"users": LEAD}]
    dm = "D" + LEAD[1:]
    assert [c["channel"] for c in gateway.called("chat.postMessage")] == [CHANNEL, dm]
    assert replies(gateway) == [f"🔺 Escalated to <@{LEAD}>"]
    (copy,) = store.cards.messages_of(card.pending_id)
    assert (copy.kind, copy.channel) == ("escalation", dm)


def test_a_new_card_is_posted_before_reminders_already_waiting_in_the_outbox(
    reminders_waiting, new_bundle_found, drain, gateway: FakeSlackGateway
) -> None:
    reminders_waiting(3)  # three reminders enqueued first
    new_bundle_found()
    gateway.calls.clear()
    drain()
    kinds = [c.method for c in gateway.calls if c.method.startswith("chat.postMessage")]
    assert kinds == ["chat.postMessage"] + ["chat.postMessage:reply"] * 3


def test_paced_reminders_queue_behind_a_new_cards_first_post_one_message_a_second(
    reminders_waiting,
    new_bundle_found,
    store: Database,
    clock: FakeClock,
    gateway: FakeSlackGateway,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reminders_waiting(5)
    paced = build_publisher(
        store.outbox,
        store.cards,
        store.audit_log,
        gateway,
        kandev_url=KANDEV_URL,
        health=Health(),
        post_spacing_s=1.0,
    )
    monotonic = FakeMonotonic()
    monkeypatch.setattr(publisher_module, "time", monotonic)
    gateway.calls.clear()
    sent: list[tuple[float, str]] = []  # (second, what) of every message posted
    sent_calls: list = []

    def second() -> None:
        while paced.work_once():
            pass
        for call in gateway.calls[len(sent_calls) :]:
            if call.method.startswith("chat.postMessage"):
                sent.append((monotonic.now, call.method))
            sent_calls.append(call)
        monotonic.advance(1.0)
        clock.advance(1.0)

    second()  # the first reminder goes; the other four wait their turn
    new_bundle_found()
    for _ in range(8):
        second()
    kinds = [what for _, what in sent]
    assert kinds == ["chat.postMessage:reply", "chat.postMessage"] + ["chat.postMessage:reply"] * 4
    seconds = [at_s for at_s, _ in sent]
    assert len(set(seconds)) == len(seconds)  # at most one message a second in the channel


def test_a_reminder_whose_post_reached_slack_before_an_error_is_not_sent_twice(
    card: Card,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    drain,
    gateway: FakeSlackGateway,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_post = gateway.post_reply

    def posted_then_lost(*args, **kwargs) -> str:
        real_post(*args, **kwargs)  # Slack got it; the reply never came back
        monkeypatch.setattr(gateway, "post_reply", real_post)
        raise SlackError("chat.postMessage", "connection_error")

    monkeypatch.setattr(gateway, "post_reply", posted_then_lost)
    at(clock, card, 10)
    assert worker.work_once() == 1
    publisher.work_once()
    clock.advance(5)
    drain()
    assert len(gateway.replies) == 1
    assert gateway.called("conversations.replies")  # looked for before posting again
    assert len(replies(gateway)) == 1
