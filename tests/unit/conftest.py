"""The use-cases (admission, answers, sync, waiting, listing, Home) on a real SQLite store and the
real publisher, with in-memory fakes of Kandev and of the Slack gateway at the edges
(tests/kit/fakes.py); and the Slack listeners on a real Bolt App over those services."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from slack_bolt import App

from kandev_slack.config.routing import Routing
from kandev_slack.core.clarification import Bundle
from kandev_slack.core.domain import Card, TaskInfo
from kandev_slack.core.signals import Signal
from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.ops.health import Health
from kandev_slack.slack.app import build_bolt_app
from kandev_slack.slack.parsing.forms import read_form
from kandev_slack.slack.presenters.tell import Teller
from kandev_slack.slack.services import Services
from kandev_slack.slack.transport.lanes import Lane
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database
from kandev_slack.store.cards.copies import Copy
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.admission import Admission, Admitted, Request
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.claims import Claims
from kandev_slack.usecases.answering.groups import Groups
from kandev_slack.usecases.answering.interactions import Interactions
from kandev_slack.usecases.answering.snooze import Snoozes
from kandev_slack.usecases.followups.subscriptions import SubscriptionService
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.intake.sync import SyncEngine
from kandev_slack.usecases.leases import InFlight
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.past_answers import PastAnswers
from kandev_slack.usecases.tasks import TaskDirectory
from kandev_slack.usecases.views.conversation import ConversationService
from kandev_slack.usecases.views.home import HomeService
from kandev_slack.usecases.views.listing import ListingService
from kandev_slack.usecases.views.waiting import Permalinks, SharedReads, WaitingQueue
from kandev_slack.usecases.views.whole_text import WholeText
from kandev_slack.wiring import build_publisher, build_sync
from tests.kit.factories import (
    ALICE_ID,
    CACHE_QUESTION,
    CHANNEL,
    DB_QUESTION,
    KANDEV_URL,
    MONGO,
    QUEUE_QUESTION,
    make_bundle,
    make_task,
)
from tests.kit.fakes import FakeClock, FakeKandev, FakeSlackGateway


@pytest.fixture
def clock() -> FakeClock | None:
    """The store's clock: the wall clock unless a module overrides this with a FakeClock."""
    return None


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock | None) -> Iterator[Database]:
    store = Database(f"sqlite:///{tmp_path / 'bot.db'}", clock=clock)
    yield store
    store.close()


@pytest.fixture
def fake_kandev() -> FakeKandev:
    return FakeKandev(KANDEV_URL)


@pytest.fixture
def gateway() -> FakeSlackGateway:
    return FakeSlackGateway()


@pytest.fixture
def health() -> Health:
    return Health()


@pytest.fixture
def routing() -> Routing:
    return Routing(default_channel=CHANNEL)


@pytest.fixture
def publisher(store: Database, gateway: FakeSlackGateway, health: Health) -> Publisher:
    return build_publisher(
        store.outbox,
        store.cards,
        store.audit_log,
        gateway,
        kandev_url=KANDEV_URL,
        health=health,
        post_spacing_s=0,
        snoozes=store.snoozes,
        group_line_delay_s=0,  # drain() sends the group lines too (their order: test_priority)
    )


@pytest.fixture
def tasks(fake_kandev: FakeKandev) -> TaskDirectory:
    return TaskDirectory(fake_kandev)


@pytest.fixture
def sync(
    fake_kandev: FakeKandev,
    store: Database,
    routing: Routing,
    tasks: TaskDirectory,
    publisher: Publisher,
    health: Health,
) -> Iterator[SyncEngine]:
    engine = build_sync(
        fake_kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        store.retention,
        routing,
        tasks,
        publisher,
        health,
        Signal("sync"),
    )
    yield engine
    engine.close()


@pytest.fixture
def answerers(routing: Routing, gateway: FakeSlackGateway) -> Answerers:
    return Answerers(routing, gateway)


@pytest.fixture
def queue(
    fake_kandev: FakeKandev,
    store: Database,
    routing: Routing,
    tasks: TaskDirectory,
    gateway: FakeSlackGateway,
    answerers: Answerers,
) -> WaitingQueue:
    return WaitingQueue(
        fake_kandev, store.cards, routing, tasks, Permalinks(gateway), answerers, SharedReads()
    )


@pytest.fixture
def identities(fake_kandev: FakeKandev, store: Database, answerers: Answerers) -> Identities:
    """Whose Kandev account people act with: the routing's modes (the bot's by default); a
    person's token gets a fake Kandev of its own."""
    return Identities(
        bot=fake_kandev,
        links=store.links,
        answerers=answerers,
        client_for=lambda token: FakeKandev(fake_kandev.base_url),
    )


@pytest.fixture
def admission(
    store: Database, queue: WaitingQueue, answerers: Answerers, identities: Identities
) -> Admission:
    return Admission(store.cards, store.audit_log, queue, answerers, identities)


@pytest.fixture
def answers(
    fake_kandev: FakeKandev, store: Database, publisher: Publisher, identities: Identities
) -> AnswerService:
    return AnswerService(
        fake_kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        publisher,
        InFlight(),
        identities,
    )


@pytest.fixture
def posted(fake_kandev: FakeKandev, sync: SyncEngine, publisher: Publisher, store: Database):
    """``posted(bundle)``: the bundle is active in Kandev and its card is in Slack (the way
    sync and the publisher put it there); returns the stored card."""

    def post(bundle: Bundle) -> Card:
        fake_kandev.add(bundle)
        assert sync.reconcile_once().posted == [bundle.pending_id]
        assert publisher.work_once()
        card = store.cards.get(bundle.pending_id)
        assert card is not None and card.ts is not None
        return card

    return post


@pytest.fixture
def card(posted) -> Card:
    """The story's bundle (``make_bundle()``), its card posted in the channel."""
    return posted(make_bundle())


@pytest.fixture
def drain(publisher: Publisher) -> Callable[[], None]:
    """``drain()``: the publisher sends everything its outbox has for now."""

    def drain_() -> None:
        while publisher.work_once():
            pass

    return drain_


@pytest.fixture
def alice_answers(admission: Admission, answers: AnswerService):
    """``alice_answers(card, on=None)``: Alice clicks MongoDB on the card's message (or on
    ``on``, another message of the card), is admitted, and her answer wins in Kandev."""

    def answer(card: Card, on: Copy | None = None) -> None:
        channel, ts = (card.channel, card.ts) if on is None else (on.channel, on.ts)
        request = Request(
            user_id=ALICE_ID,
            action="answer",
            source="slack:button",
            via="card",
            pending_id=card.pending_id,
            channel=channel,
            ts=ts,
            option=("q1", "q1_opt2"),
        )
        admitted = admission.admit(request)
        assert isinstance(admitted, Admitted)
        assert answers.submit(admitted, answers=(MONGO,)).kind == "won"

    return answer


# ---- the Slack listeners, on a real Bolt App --------------------------------------------------


@pytest.fixture
def services(
    admission: Admission,
    answers: AnswerService,
    queue: WaitingQueue,
    fake_kandev: FakeKandev,
    store: Database,
    gateway: FakeSlackGateway,
) -> Iterator[Services]:
    """What the listeners delegate to: the real services on the fakes above."""
    lanes = [Lane("answering", workers=4, waiting=4), Lane("reading", workers=2, waiting=4)]
    snoozes = Snoozes(store.snoozes, store.cards, store.audit_log, lambda: None, lambda: None)
    home = HomeService(
        queue,
        store.cards,
        store.followups,
        store.viewers,
        gateway,
        Signal("card changed"),
        kandev_url=KANDEV_URL,
        snoozes=snoozes,
    )
    notifier = Notifier(gateway)
    claims = Claims(
        store.claims,
        store.cards,
        store.audit_log,
        queue.answerers.claim_for,
        lambda: None,
    )
    groups = Groups(store.cards, store.audit_log)
    yield Services(
        admission=admission,
        answers=answers,
        listing=ListingService(queue, fake_kandev, kandev_url=KANDEV_URL),
        home=home,
        notifier=notifier,
        kandev_public_url=KANDEV_URL,
        answering=lanes[0],
        reading=lanes[1],
        conversation=ConversationService(
            fake_kandev, PastAnswers(store.cards, queue.routing), queue.routing, queue.permalinks
        ),
        subscriptions=SubscriptionService(store.followups, fake_kandev),
        claims=claims,
        snoozes=snoozes,
        groups=groups,
        interactions=Interactions(
            admission, answers, lanes[0], lanes[1], read_form, claims, snoozes, groups
        ),
        teller=Teller(notifier, home),
        whole=WholeText(store.outbox),
    )
    for lane in lanes:
        lane.shutdown()


@pytest.fixture
def bolt(fake_slack: FakeSlack, services: Services) -> App:
    """The bot's Bolt App (its listeners registered) as Socket Mode runs it; its client talks
    to the fake Slack (``auth.test`` at construction), every other Slack call goes through the
    fake gateway of the services."""
    web = make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url)
    return build_bolt_app(web, services, signing_secret=None, socket_mode=True)


# ---- rendering fixtures (the cards', the kinds' renderers', the surfaces' tests) ----


@pytest.fixture
def one_question() -> Bundle:
    return make_bundle(DB_QUESTION, context="why the agent asks")


@pytest.fixture
def three_questions() -> Bundle:
    return make_bundle(DB_QUESTION, CACHE_QUESTION, QUEUE_QUESTION)


@pytest.fixture
def task() -> TaskInfo:
    return make_task(workspace_id="")
