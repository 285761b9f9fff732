"""Reminders and escalation of waiting cards, on a store whose clock the test moves: each step
once, at its time, with its mentions; a step missed while down is sent once; never for a
resolved bundle."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot import publisher as publisher_module
from bot.admission import Admission, Admitted, Request
from bot.answers import AnswerService
from bot.domain import Card
from bot.followup_config import FollowUps
from bot.health import Health
from bot.kandev.models import Answer
from bot.permissions import Permissions
from bot.publisher import Publisher
from bot.reminders import FollowUpWorker
from bot.routing import Routing
from bot.slack_api.gateway import SlackError
from bot.store import Store
from tests.factories import ALICE_ID, CHANNEL, KANDEV_URL, make_bundle
from tests.fakes import FakeClock, FakeMonotonic, FakeSlackGateway

LEADS = "C0LEADS0001"
LEAD = "U0LEAD0001"
MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])
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
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path / 'bot.db'}", clock=clock)
    yield store
    store.close()


@pytest.fixture
def followups() -> FollowUps:
    return FOLLOWUPS


@pytest.fixture
def routing(followups: FollowUps) -> Routing:
    return Routing(default_channel=CHANNEL, default_followups=followups)


@pytest.fixture
def worker(store: Store, permissions: Permissions, publisher: Publisher) -> FollowUpWorker:
    return FollowUpWorker(store, permissions, publisher, Health())


def drain(publisher: Publisher) -> None:
    while publisher.work_once():
        pass


def replies(gateway: FakeSlackGateway) -> list[str]:
    return [c["text"] for c in gateway.called("chat.postMessage:reply")]


def at(clock: FakeClock, card: Card, seconds: float) -> None:
    """Move the clock to ``seconds`` after the card was claimed."""
    clock.advance((card.created_at - clock()).total_seconds() + seconds)


def tick(worker: FollowUpWorker, publisher: Publisher) -> int:
    claimed = worker.work_once()
    drain(publisher)
    return claimed


def test_reminders_come_at_their_times_in_the_thread_with_the_mentions(
    posted,
    store: Store,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    gateway: FakeSlackGateway,
) -> None:
    card = posted(make_bundle())
    at(clock, card, 9.9)
    assert tick(worker, publisher) == 0 and replies(gateway) == []
    at(clock, card, 10)
    assert tick(worker, publisher) == 1
    assert tick(worker, publisher) == 0  # once per step
    assert replies(gateway) == [
        "⏰ Still waiting for an answer after 10 s <!subteam^S0ONCALL> <@U0ANA>"
    ]
    (call,) = gateway.called("chat.postMessage:reply")
    assert (call["channel"], call["thread_ts"]) == (CHANNEL, card.ts)
    at(clock, card, 15)
    tick(worker, publisher)
    at(clock, card, 20)
    tick(worker, publisher)
    at(clock, card, 29)
    tick(worker, publisher)
    assert [r.split(" <")[0] for r in replies(gateway)] == [
        "⏰ Still waiting for an answer after 10 s",
        "⏰ Still waiting for an answer after 15 s",
        "⏰ Still waiting for an answer after 20 s",
    ]  # max_reminders = 3


def test_reminders_missed_while_down_are_sent_once(
    posted,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    gateway: FakeSlackGateway,
) -> None:
    card = posted(make_bundle())
    at(clock, card, 17)  # steps 1 and 2 were both due
    assert tick(worker, publisher) == 1
    assert tick(worker, publisher) == 0
    assert [r.split(" <")[0] for r in replies(gateway)] == [
        "⏰ Still waiting for an answer after 15 s"
    ]
    at(clock, card, 20)
    assert tick(worker, publisher) == 1 and len(replies(gateway)) == 2


def test_two_workers_claim_each_step_once(
    posted,
    store: Store,
    permissions: Permissions,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    gateway: FakeSlackGateway,
) -> None:
    other = FollowUpWorker(store, permissions, publisher, Health())
    card = posted(make_bundle())
    at(clock, card, 30)
    assert worker.work_once() == 2  # the reminder and the escalation
    assert other.work_once() == 0
    drain(publisher)
    assert len(replies(gateway)) == 2
    assert len([c for c in gateway.called("chat.postMessage") if c["channel"] == LEADS]) == 1


def answer(admission: Admission, answers: AnswerService, card: Card) -> None:
    request = Request(
        user_id=ALICE_ID,
        action="answer",
        source="slack:button",
        via="card",
        pending_id=card.pending_id,
        channel=card.channel,
        ts=card.ts,
        option=("q1", "q1_opt2"),
    )
    admitted = admission.admit(request)
    assert isinstance(admitted, Admitted)
    assert answers.submit(admitted, answers=(MONGO,)).kind == "won"


def test_no_reminder_for_a_resolved_bundle_even_one_already_enqueued(
    posted,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    gateway: FakeSlackGateway,
    admission: Admission,
    answers: AnswerService,
) -> None:
    card = posted(make_bundle())
    at(clock, card, 10)
    assert worker.work_once() == 1  # claimed and enqueued, not sent yet
    answer(admission, answers, card)
    drain(publisher)
    at(clock, card, 100)
    assert tick(worker, publisher) == 0
    assert replies(gateway) == []
    assert gateway.called("chat.postMessage:reply") == []


def test_escalation_posts_the_card_there_and_a_notice_under_the_original(
    posted,
    store: Store,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    gateway: FakeSlackGateway,
    admission: Admission,
    answers: AnswerService,
) -> None:
    card = posted(make_bundle())
    at(clock, card, 30)
    tick(worker, publisher)
    assert "🔺 Escalated to <#C0LEADS0001>" in replies(gateway)
    (esc,) = [c for c in gateway.called("chat.postMessage") if c["channel"] == LEADS]
    assert esc["message"].blocks[0]["text"]["text"] == (
        "🔺 *Escalated:* waiting for an answer for 30 s, first asked in "
        f"<#{CHANNEL}> <!subteam^S0LEADS>"
    )
    assert any(b["type"] == "actions" for b in esc["message"].blocks)  # interactive
    at(clock, card, 300)
    assert tick(worker, publisher) == 0  # once
    answer(admission, answers, card)
    drain(publisher)
    assert {c["channel"] for c in gateway.called("chat.update")} == {CHANNEL, LEADS}
    assert len(gateway.called("chat.update")) == 2


@pytest.mark.parametrize(
    "followups", [FollowUps(escalate_after=5, escalate_to=LEAD)], ids=["to-a-person"]
)
def test_escalation_to_a_person_is_a_direct_message(
    posted,
    store: Store,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    gateway: FakeSlackGateway,
) -> None:
    card = posted(make_bundle())
    at(clock, card, 5)
    tick(worker, publisher)
    assert gateway.called("conversations.open") == [{"users": LEAD}]
    dm = "D" + LEAD[1:]
    assert [c["channel"] for c in gateway.called("chat.postMessage")] == [CHANNEL, dm]
    assert replies(gateway) == [f"🔺 Escalated to <@{LEAD}>"]
    (copy,) = store.messages_of(card.pending_id)
    assert (copy.kind, copy.channel) == ("escalation", dm)


def test_a_new_card_is_posted_before_reminders_already_waiting_in_the_outbox(
    posted,
    fake_kandev,
    sync,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    gateway: FakeSlackGateway,
) -> None:
    waiting = [posted(make_bundle(pending_id=f"p{n}", task_id=f"t{n}")) for n in range(3)]
    at(clock, waiting[-1], 10)
    assert worker.work_once() == 3  # three reminders enqueued first
    fake_kandev.add(make_bundle(pending_id="new", task_id="t-new"))
    assert sync.reconcile_once().posted == ["new"]
    gateway.calls.clear()
    drain(publisher)
    kinds = [c.method for c in gateway.calls if c.method.startswith("chat.postMessage")]
    assert kinds == ["chat.postMessage"] + ["chat.postMessage:reply"] * 3


def test_paced_reminders_queue_behind_a_new_cards_first_post_one_message_a_second(
    posted,
    fake_kandev,
    sync,
    store: Store,
    clock: FakeClock,
    worker: FollowUpWorker,
    gateway: FakeSlackGateway,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waiting = [posted(make_bundle(pending_id=f"p{n}", task_id=f"t{n}")) for n in range(5)]
    paced = Publisher(store, gateway, kandev_url=KANDEV_URL, health=Health(), post_spacing_s=1.0)
    monotonic = FakeMonotonic()
    monkeypatch.setattr(publisher_module, "time", monotonic)
    at(clock, waiting[-1], 10)
    assert worker.work_once() == 5
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
    fake_kandev.add(make_bundle(pending_id="new", task_id="t-new"))
    assert sync.reconcile_once().posted == ["new"]
    for _ in range(8):
        second()
    kinds = [what for _, what in sent]
    assert kinds == ["chat.postMessage:reply", "chat.postMessage"] + ["chat.postMessage:reply"] * 4
    seconds = [at_s for at_s, _ in sent]
    assert len(set(seconds)) == len(seconds)  # at most one message a second in the channel


def test_a_reminder_whose_post_reached_slack_before_an_error_is_not_sent_twice(
    posted,
    clock: FakeClock,
    worker: FollowUpWorker,
    publisher: Publisher,
    gateway: FakeSlackGateway,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    card = posted(make_bundle())
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
    drain(publisher)
    assert len(gateway.replies) == 1
    assert gateway.called("conversations.replies")  # looked for before posting again
    assert len(replies(gateway)) == 1
