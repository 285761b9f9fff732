"""SyncEngine through the fakes at its edges: new bundles are claimed and posted once by the
real publisher; bundles resolved in Kandev get their card edited."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from kandev_slack.commands.run import Bot
from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardState
from kandev_slack.core.signals import Inbox, Signal
from kandev_slack.kandev.errors import (
    KandevError,
    KandevNotFoundError,
    KandevProtocolError,
    KandevToolError,
    KandevUnavailable,
)
from kandev_slack.kandev.hints import NewPending
from kandev_slack.kandev.models import ActiveList
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent
from kandev_slack.usecases.followups import housekeeping
from kandev_slack.usecases.intake import discovery as discovery_module
from kandev_slack.usecases.intake import reconciler as reconciler_module
from kandev_slack.usecases.intake import unroutable as unroutable_module
from kandev_slack.usecases.intake.discovery import ONE_BY_ONE
from kandev_slack.usecases.intake.sync import SyncEngine
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.wiring import build_sync
from tests.kit.factories import (
    ALICE_ID,
    CACHE_QUESTION,
    CHANNEL,
    DB_QUESTION,
    MONGO,
    make_bundle,
    numbered_bundle,
    record_card,
)
from tests.kit.fakes import FakeKandev, FakeMonotonic, FakeSlackGateway


@pytest.fixture
def make_engine(
    fake_kandev: FakeKandev,
    store: Database,
    routing: Routing,
    tasks,
    publisher: Publisher,
    health: Health,
) -> Iterator[Callable[..., SyncEngine]]:
    """``make_engine(other_routing=None, *, hinted=False)``: an engine on the fakes (routing
    with ``other_routing`` if given); ``hinted``: wired like the app's, push hints handing new
    bundles over one by one. Closed after the test."""
    made: list[SyncEngine] = []

    def make(other_routing: Routing | None = None, *, hinted: bool = False) -> SyncEngine:
        inbox = Inbox[NewPending]("new bundles", wakes=Signal("hinted")) if hinted else None
        engine = build_sync(
            fake_kandev,
            store.cards,
            store.submissions,
            store.audit_log,
            store.retention,
            other_routing or routing,
            tasks,
            publisher,
            health,
            Signal("sync"),
            new_bundles=inbox,
        )
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.close()


def _until(predicate: Callable[[], object], why: object = None) -> None:
    """Wait (10 s at most) until ``predicate()`` holds; ``why``: shown if it never does."""
    deadline = time.monotonic() + 10.0
    while not predicate():
        assert time.monotonic() < deadline, why
        time.sleep(0.01)


def test_a_new_bundle_is_claimed_and_posted_once(
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Database,
) -> None:
    bundle = fake_kandev.add(make_bundle(), title="Pick a datastore", workspace_name="Platform")

    report = sync.reconcile_once()
    assert publisher.work_once()

    assert (report.listed, report.posted) == (1, [bundle.pending_id])
    found = gateway.card_of(bundle.pending_id)
    assert found is not None
    channel, ts, message = found
    card = store.cards.get(bundle.pending_id)
    assert card is not None and (card.channel, card.ts) == (channel, ts) == (CHANNEL, ts)
    assert (card.task.title, card.task.workspace_name) == ("Pick a datastore", "Platform")
    assert "Which database should we use?" in message.text
    assert sync.reconcile_once().posted == []
    assert not publisher.work_once()
    assert len(gateway.called("chat.postMessage")) == 1


def test_a_long_list_is_taken_page_by_page_and_only_a_whole_read_ends_cards(
    card: Card, sync: SyncEngine, fake_kandev: FakeKandev, store: Database
) -> None:
    """With a long list waiting (a start with 1,000), each page's new bundles are taken as
    soon as their page is read, while Kandev serves the rest: a read that fails on its second
    page has taken the first page's. What left the list is decided from a whole read only."""
    fake_kandev.resolve_in_kandev(card.pending_id, [Answer(question_id="q1", selected_options=[])])
    bundles = [fake_kandev.add(numbered_bundle(n)) for n in range(150)]  # pages of 100
    fake_kandev.fail("list_active page", times=1)

    with pytest.raises(KandevUnavailable):
        sync.reconcile_once()

    assert [store.cards.get(b.pending_id) is not None for b in bundles] == [True] * 100 + [
        False
    ] * 50
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # not listed, not ended

    report = sync.reconcile_once()

    assert report.posted == [b.pending_id for b in bundles[100:]]
    assert report.resolved == [card.pending_id]
    assert report.listed == 150


def test_a_bundle_answered_in_kandev_gets_its_card_edited(
    card: Card,
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Database,
) -> None:
    answer = Answer(question_id="q1", selected_options=["q1_opt1"])
    fake_kandev.resolve_in_kandev(card.pending_id, [answer])

    report = sync.reconcile_once()
    assert publisher.work_once()

    assert report.resolved == [card.pending_id]
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert resolved.state is CardState.ANSWERED and resolved.outcome.via == "kandev"
    [edit] = gateway.called("chat.update")
    assert edit["ts"] == card.ts and "PostgreSQL" in edit["message"].text


def test_a_new_process_knows_the_waiting_cards_bundles_before_its_first_read(
    card: Card,
    make_engine: Callable[..., SyncEngine],
    fake_kandev: FakeKandev,
) -> None:
    """A restart with 1,000 waiting would decode every bundle in its first read only to find
    each has a card: the store says which have one, and their sessions, beforehand."""
    restarted = make_engine()
    fake_kandev.calls.clear()

    assert restarted.reconcile_once().posted == []

    [first_read] = fake_kandev.called("list_active")
    assert card.pending_id in first_read["known"]
    assert card.session_id is not None
    fake_kandev.resolve_in_kandev(card.pending_id, [Answer(question_id="q1", selected_options=[])])
    assert restarted.reconciler.resolve_session(card.session_id)[0] == [card.pending_id]


def test_the_store_is_recalled_once_and_a_bundle_kandev_no_longer_lists_is_forgotten(
    card: Card, make_engine: Callable[..., SyncEngine], store: Database
) -> None:
    """The waiting cards are read from the store before the first read only: a bundle a read
    does not list is forgotten, even while its card still waits to be ended (a store read of
    every waiting card at each poll would also cost more than the poll)."""
    restarted = make_engine()
    assert card.pending_id in restarted.discovery.known()

    restarted.discovery.take_listed(ActiveList(ids=[], newest=None))

    assert store.cards.get(card.pending_id).state is CardState.PENDING
    assert card.pending_id not in restarted.discovery.known()


def test_kandev_unreachable_fails_the_cycle_and_claims_nothing(
    sync: SyncEngine, fake_kandev: FakeKandev, store: Database
) -> None:
    bundle = fake_kandev.add(make_bundle())
    fake_kandev.fail()

    with pytest.raises(KandevUnavailable):
        sync.reconcile_once()

    assert store.cards.get(bundle.pending_id) is None
    fake_kandev.recover()
    assert sync.reconcile_once().posted == [bundle.pending_id]


def test_a_post_slack_refuses_until_someone_acts_is_kept_and_reported(
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Database,
    health: Health,
) -> None:
    bundle = fake_kandev.add(numbered_bundle(1))
    gateway.fail("chat.postMessage", "not_in_channel")

    sync.reconcile_once()
    assert publisher.work_once()

    assert store.cards.get(bundle.pending_id).ts is None  # type: ignore[union-attr]
    assert store.outbox.outbox_pending_count() == 1
    [reason] = health.report().reasons
    assert reason.startswith("slack: chat.postMessage failed in C0QUESTION: not_in_channel")


# ---- discovery -----------------------------------------------------------------------------


@pytest.fixture
def monotonic(monkeypatch: pytest.MonkeyPatch) -> FakeMonotonic:
    """The engine's waits (grace periods, back-off) on a clock that moves only when told."""
    clock = FakeMonotonic()
    for module in (unroutable_module, reconciler_module, housekeeping):
        monkeypatch.setattr(module, "time", clock)
    return clock


def test_a_bundle_a_replica_claimed_is_not_posted_here(
    sync: SyncEngine, fake_kandev: FakeKandev, publisher: Publisher, store: Database
) -> None:
    bundle = fake_kandev.add(make_bundle())
    assert record_card(store, bundle.pending_id, channel=CHANNEL)  # the other replica won the claim

    assert sync.reconcile_once().posted == []
    assert store.outbox.outbox_pending_count() == 0
    assert not publisher.work_once()


def test_a_young_bundle_listed_with_some_of_its_questions_waits_for_the_rest(
    sync: SyncEngine, fake_kandev: FakeKandev, publisher: Publisher, gateway, store: Database
) -> None:
    young = datetime.now(UTC)
    partial = fake_kandev.add(make_bundle(DB_QUESTION, created_at=young))
    fake_kandev.totals[partial.pending_id] = 2

    assert sync.reconcile_once().posted == []
    assert store.cards.get(partial.pending_id) is None

    complete = make_bundle(DB_QUESTION, CACHE_QUESTION, created_at=young)
    fake_kandev.active[partial.pending_id] = complete
    assert sync.reconcile_once().posted == [partial.pending_id]
    assert publisher.work_once()
    [post] = gateway.called("chat.postMessage")
    assert "Which cache?" in post["message"].text


def test_an_old_bundle_is_posted_without_a_completeness_check(
    sync: SyncEngine, fake_kandev: FakeKandev
) -> None:
    old = fake_kandev.add(
        make_bundle(DB_QUESTION, created_at=datetime.now(UTC) - timedelta(minutes=5))
    )
    fake_kandev.totals[old.pending_id] = 2

    assert sync.reconcile_once().posted == [old.pending_id]
    assert fake_kandev.called("question_total") == []


# ---- routes --------------------------------------------------------------------------------


def test_a_bundle_whose_task_cannot_be_read_waits_with_back_off_until_it_can(
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    publisher: Publisher,
    gateway: FakeSlackGateway,
    store: Database,
    health: Health,
    monotonic: FakeMonotonic,
) -> None:
    bundle = fake_kandev.add(make_bundle())
    fake_kandev.fail("task", KandevNotFoundError("NOT_FOUND", "task not visible"))

    assert sync.reconcile_once().posted == []
    assert store.cards.get(bundle.pending_id) is None and not publisher.work_once()
    assert gateway.called("chat.postMessage") == []
    [reason] = health.report().reasons
    assert reason.startswith("unroutable: 1 question cannot be routed: task lookup failed")

    sync.reconcile_once()  # too soon: not looked up again
    assert len(fake_kandev.called("task")) == 1
    monotonic.advance(1.5)
    sync.reconcile_once()  # tried again, fails again: waits twice as long
    assert len(fake_kandev.called("task")) == 2
    assert sync.unroutable[bundle.pending_id].attempts == 2
    monotonic.advance(1.5)
    sync.reconcile_once()
    assert len(fake_kandev.called("task")) == 2

    fake_kandev.recover()
    monotonic.advance(1.0)
    assert sync.reconcile_once().posted == [bundle.pending_id]
    assert publisher.work_once()
    assert gateway.card_of(bundle.pending_id) is not None
    assert gateway.card_of(bundle.pending_id)[0] == CHANNEL  # type: ignore[index]
    assert health.report().reasons == ()
    assert sync.unroutable == {}


def test_a_workspace_without_a_route_is_a_health_problem_and_posts_nothing(
    make_engine, fake_kandev: FakeKandev, store: Database, health: Health
) -> None:
    data_only = RouteRule(workspace="Data", channel="C0DATA", answerers=frozenset(), line=1)
    engine = make_engine(Routing(rules=(data_only,)))
    bundle = fake_kandev.add(make_bundle(), workspace_name="Platform")

    assert engine.reconcile_once().posted == []

    assert store.cards.get(bundle.pending_id) is None
    [reason] = health.report().reasons
    assert "no channel for workspace 'Platform'" in reason


# ---- resolution elsewhere ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "state", "line"),
    [
        ("rejected", CardState.REJECTED, "Rejected in Kandev"),
        ("cancelled", CardState.ENDED, "Ended — nobody answered"),
        ("expired", CardState.ENDED, "Ended — nobody answered"),
        ("unknown", CardState.UNAVAILABLE, "Unavailable — Kandev no longer shows"),
    ],
)
def test_a_bundle_that_left_the_list_gets_its_final_state(
    card: Card,
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Database,
    status: str,
    state: CardState,
    line: str,
) -> None:
    fake_kandev.end(card.pending_id, status)

    assert sync.reconcile_once().resolved == [card.pending_id]
    assert publisher.work_once()

    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.state is state
    assert resolved.outcome is not None and resolved.outcome.via == "kandev"
    [edit] = gateway.called("chat.update")
    assert line in edit["message"].text
    [entry] = [e for e in store.audit_log.audit_entries(card.pending_id) if e.result == "synced"]
    assert (entry.action, entry.source) == (state.value, "kandev")


@pytest.mark.parametrize(
    "unreadable",
    [
        KandevProtocolError("unexpected ConversationPage shape: messages.0.metadata"),
        KandevToolError("INTERNAL", "database is locked"),
    ],
    ids=["malformed page", "tool error"],
)
def test_a_final_state_kandev_cannot_read_leaves_the_card_pending_until_it_can(
    card: Card,
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    store: Database,
    health: Health,
    unreadable: KandevError,
) -> None:
    """Unreadable is "try again", never an answer: the card stays pending (not "Unavailable"),
    /healthz says so, and the next cycle that can read it ends the card as Kandev recorded."""
    fake_kandev.resolve_in_kandev(card.pending_id, [Answer(question_id="q1", custom_text="yes")])
    fake_kandev.fail("final_state", unreadable, times=1)

    assert sync.reconcile_once().resolved == []
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert any(r.startswith("final_state:") for r in health.report().reasons), health.report()

    assert sync.reconcile_once().resolved == [card.pending_id]
    assert store.cards.get(card.pending_id).state is CardState.ANSWERED  # type: ignore[union-attr]
    assert health.report().ok, health.report()


def test_a_final_state_is_read_from_the_cards_own_session(
    card: Card, sync: SyncEngine, fake_kandev: FakeKandev
) -> None:
    """Not the task's primary session (which may be a newer one without this bundle)."""
    assert card.session_id
    fake_kandev.end(card.pending_id, "cancelled")
    fake_kandev.calls.clear()

    sync.reconcile_once()

    [read] = fake_kandev.called("final_state")
    assert read["session_id"] == card.session_id


@pytest.mark.parametrize("action", ["answer", "reject"])
def test_a_resolution_a_slack_user_won_is_attributed_to_them(
    card: Card,
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Database,
    action: str,
) -> None:
    content = SubmissionContent(
        action=action,  # type: ignore[arg-type]
        answers=[MONGO] if action == "answer" else [],
        reason="not now" if action == "reject" else "",
    )
    # Alice's answer won in Kandev; her process stopped before it edited the card.
    assert store.submissions.begin_submission(card.pending_id, "key-1", ALICE_ID, content)
    assert store.submissions.finish_submission("key-1", "won")
    if action == "answer":
        fake_kandev.resolve_in_kandev(card.pending_id, [MONGO])
    else:
        fake_kandev.end(card.pending_id, "rejected")

    assert sync.reconcile_once().resolved == [card.pending_id]
    assert publisher.work_once()

    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("slack", ALICE_ID)
    [edit] = gateway.called("chat.update")
    if action == "answer":
        assert f"Answered by <@{ALICE_ID}> in Slack: MongoDB" in str(edit["message"].blocks)
    else:
        assert resolved.outcome.reason == "not now"
        assert f"Rejected by <@{ALICE_ID}> in Slack" in str(edit["message"].blocks)


def test_an_answer_in_flight_owns_the_card_within_the_grace_window(
    card: Card, sync: SyncEngine, fake_kandev: FakeKandev, store: Database
) -> None:
    content = SubmissionContent(action="answer", answers=[MONGO])
    assert store.submissions.begin_submission(
        card.pending_id, "key-1", ALICE_ID, content
    )  # sending now
    fake_kandev.resolve_in_kandev(card.pending_id, [MONGO])

    assert sync.reconcile_once().resolved == []

    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert fake_kandev.called("final_state") == []


@pytest.fixture
def vanished(card: Card, sync: SyncEngine, fake_kandev: FakeKandev, monotonic) -> Card:
    """The story's card, whose bundle dropped out of the active list while Kandev still says
    "pending"; a full read has seen it missing (and left it pending)."""
    fake_kandev.vanish(card.pending_id)
    assert sync.reconcile_once().resolved == []
    return card


def test_a_missing_bundle_still_pending_in_kandev_ends_only_after_the_grace_period(
    vanished: Card, sync: SyncEngine, store: Database, monotonic: FakeMonotonic
) -> None:
    card = vanished
    monotonic.advance(reconciler_module.PENDING_GRACE_S / 2)
    assert sync.reconcile_once().resolved == []
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]

    monotonic.advance(reconciler_module.PENDING_GRACE_S / 2 + 0.1)
    assert sync.reconcile_once().resolved == [card.pending_id]
    assert store.cards.get(card.pending_id).state is CardState.ENDED  # type: ignore[union-attr]


def test_a_missing_bundle_that_comes_back_starts_its_grace_period_again(
    vanished: Card,
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    store: Database,
    monotonic: FakeMonotonic,
) -> None:
    card = vanished
    monotonic.advance(reconciler_module.PENDING_GRACE_S - 1)

    fake_kandev.active[card.pending_id] = card.bundle  # listed again
    fake_kandev.finals.pop(card.pending_id)
    assert sync.reconcile_once().resolved == []
    fake_kandev.vanish(card.pending_id)
    monotonic.advance(2)

    assert sync.reconcile_once().resolved == []
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("inbox", "line", "reason"),
    [
        (
            True,
            "⏹ Ended — the agent was given new instructions before anyone answered",
            "superseded",
        ),
        (False, "⏹ Ended — nobody answered (cancelled, expired or the agent moved on)", ""),
    ],
)
def test_a_superseded_bundle_says_the_agent_moved_on_only_when_the_inbox_says_so(
    inbox: bool,
    line: str,
    reason: str,
    card: Card,
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    store: Database,
    publisher: Publisher,
    gateway,
    monotonic: FakeMonotonic,
) -> None:
    """Inbox on: its history says superseded, the card ends at once saying so. Off (the
    history route is a 404): "pending" is read neither as an answer nor as waiting for ever —
    the generic line after the grace."""
    if inbox:
        fake_kandev.inbox_history = {}
    fake_kandev.supersede(card.pending_id)

    if not inbox:
        assert sync.reconcile_once().resolved == []
        monotonic.advance(reconciler_module.PENDING_GRACE_S + 0.1)
    assert sync.reconcile_once().resolved == [card.pending_id]
    ended = store.cards.get(card.pending_id)
    assert ended is not None and ended.state is CardState.ENDED
    assert ended.outcome is not None and ended.outcome.reason == reason
    assert publisher.work_once()
    [edit] = gateway.called("chat.update")
    blocks = str(edit["message"].blocks)
    assert line in blocks and (inbox or "new instructions" not in blocks)
    assert fake_kandev.called("ended_reason")[0]["workspace_id"] == (
        card.workspace_id or card.task.workspace_id
    )


def test_with_the_inbox_on_a_bundle_the_history_does_not_hold_gets_the_generic_line(
    vanished: Card, sync: SyncEngine, fake_kandev: FakeKandev, store: Database, monotonic
) -> None:
    fake_kandev.inbox_history = {}  # on, but this bundle is not in it (e.g. a list mid-change)
    assert sync.reconcile_once().resolved == []
    monotonic.advance(reconciler_module.PENDING_GRACE_S + 0.1)
    assert sync.reconcile_once().resolved == [vanished.pending_id]
    ended = store.cards.get(vanished.pending_id)
    assert ended is not None and ended.outcome is not None and ended.outcome.reason == ""


def test_an_unreadable_inbox_history_is_not_a_reason(
    vanished: Card, sync: SyncEngine, fake_kandev: FakeKandev, store: Database, monotonic
) -> None:
    fake_kandev.inbox_history = {vanished.pending_id: "superseded"}
    fake_kandev.fail("ended_reason", KandevToolError("INTERNAL", "history broke"))
    assert sync.reconcile_once().resolved == []
    monotonic.advance(reconciler_module.PENDING_GRACE_S + 0.1)
    assert sync.reconcile_once().resolved == [vanished.pending_id]
    ended = store.cards.get(vanished.pending_id)
    assert ended is not None and ended.outcome is not None and ended.outcome.reason == ""


# ---- push hints: reading only the newest bundles --------------------------------------------

OLD = datetime.now(UTC) - timedelta(hours=1)


def _hint(bundle) -> NewPending:
    return NewPending(bundle.pending_id, bundle.task_id, bundle.session_id)


def test_a_hinted_bundle_is_posted_from_a_read_of_the_newest_bundles_only(
    sync: SyncEngine, fake_kandev: FakeKandev, publisher: Publisher, gateway, store: Database
) -> None:
    queue = [
        fake_kandev.add(numbered_bundle(n, created_at=OLD + timedelta(minutes=n)))
        for n in range(1, 4)
    ]
    assert sync.reconcile_once().posted == [b.pending_id for b in queue]
    new = fake_kandev.add(numbered_bundle(4, created_at=OLD + timedelta(minutes=30)))
    fake_kandev.calls.clear()

    report = sync.discover_new([NewPending(new.pending_id)])

    assert report.posted == [new.pending_id]
    [read] = fake_kandev.called("list_pending")
    newest = queue[-1].created_at
    assert read["created_since"] == newest - timedelta(seconds=discovery_module.NEWEST_MARGIN_S)
    assert report.shown == {queue[-1].pending_id, new.pending_id}  # not the rest of the queue
    assert fake_kandev.called("final_state") == []  # nor checked for resolutions
    assert publisher.work_once() and gateway.card_of(new.pending_id) is not None
    card = store.cards.get(new.pending_id)
    assert card is not None and card.ts is not None


def test_each_bundle_is_posted_once_whichever_read_sees_it_first(
    sync: SyncEngine, fake_kandev: FakeKandev, drain, gateway
) -> None:
    first = fake_kandev.add(numbered_bundle(1))
    assert sync.discover_new([NewPending(first.pending_id)]).posted == [first.pending_id]
    assert sync.reconcile_once().posted == []
    assert sync.discover_new([NewPending(first.pending_id)]).posted == []

    second = fake_kandev.add(numbered_bundle(2))
    assert sync.reconcile_once().posted == [second.pending_id]
    assert sync.discover_new([NewPending(second.pending_id)]).posted == []

    drain()
    posts = [call["pending_id"] for call in gateway.called("chat.postMessage")]
    assert sorted(posts) == [first.pending_id, second.pending_id]


def test_a_bundle_older_than_the_newest_seen_is_found_by_the_next_full_read(
    sync: SyncEngine, fake_kandev: FakeKandev
) -> None:
    fake_kandev.add(numbered_bundle(1, created_at=OLD + timedelta(minutes=30)))
    sync.reconcile_once()
    # Listed late with an earlier creation time (e.g. a clock set back): not in the newest part.
    late = fake_kandev.add(numbered_bundle(2, created_at=OLD))

    assert sync.discover_new([NewPending(late.pending_id)]).posted == []
    assert sync.reconcile_once().posted == [late.pending_id]


def test_a_hinted_bundle_not_listed_yet_is_looked_for_again_a_few_times(
    make_engine, fake_kandev: FakeKandev, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(discovery_module, "HINT_RETRY_S", 0.0)
    engine = make_engine(hinted=True)
    inbox = engine.new_bundles
    assert inbox is not None

    hinted = [NewPending("pending-not-listed-yet", "task-x", "session-x")]
    for _ in range(discovery_module.HINT_RETRIES):
        engine.discover_new(hinted)
        assert inbox.wakes.wait(timeout=10.0)  # handed over again
        inbox.wakes.take()
        assert inbox.drain() == hinted
    engine.discover_new(hinted)
    assert inbox.wakes.wait(timeout=0.5) is False  # the next full read is left to find it

    bundle = fake_kandev.add(numbered_bundle(1, created_at=datetime.now(UTC)))
    engine.discover_new([NewPending(bundle.pending_id)])
    assert inbox.wakes.wait(timeout=0.5) is False  # found: not looked for again
    assert inbox.drain() == []


def test_a_new_bundle_hint_reads_that_bundle_and_other_wake_ups_the_whole_list(
    make_engine, fake_kandev: FakeKandev, store: Database
) -> None:
    engine = make_engine(hinted=True)
    engine.poll_interval = 3600.0  # only the start-up read and hints make it read
    waiting = fake_kandev.add(numbered_bundle(1, created_at=OLD))
    stop = threading.Event()
    loops = [
        threading.Thread(target=engine.run, args=(stop,), daemon=True),
        threading.Thread(target=engine.run_hints, args=(stop,), daemon=True),
    ]

    def full_reads() -> int:
        return len(fake_kandev.called("list_active"))

    def newest_reads() -> int:
        return len(fake_kandev.called("list_pending"))

    for loop in loops:
        loop.start()
    try:
        _until(
            lambda: store.cards.get(waiting.pending_id) is not None, fake_kandev.calls
        )  # start-up
        assert (full_reads(), newest_reads()) == (1, 0)

        new = fake_kandev.add(numbered_bundle(2, created_at=OLD + timedelta(seconds=30)))
        assert engine.new_bundles is not None
        engine.new_bundles.put(_hint(new))
        _until(lambda: store.cards.get(new.pending_id) is not None, fake_kandev.calls)
        assert (full_reads(), newest_reads()) == (1, 0)
        assert len(fake_kandev.called("conversation_bundle")) == 1

        fake_kandev.end(waiting.pending_id)  # resolved elsewhere: a hint asks for a full read
        engine.wakeup.raise_()
        _until(
            lambda: store.cards.get(waiting.pending_id).state is CardState.ENDED,  # type: ignore[union-attr]
            fake_kandev.calls,
        )
        assert full_reads() == 2
    finally:
        stop.set()
        engine.wakeup.raise_()
        engine.new_bundles.wakes.raise_()
        for loop in loops:
            loop.join(5)
    assert not any(loop.is_alive() for loop in loops)


def test_a_hinted_bundle_is_read_from_its_conversation_with_its_task_never_the_list(
    sync: SyncEngine, fake_kandev: FakeKandev, publisher: Publisher, gateway, store: Database
) -> None:
    sync.reconcile_once()  # what the full read knows: nothing waits yet
    young = fake_kandev.add(make_bundle(DB_QUESTION, CACHE_QUESTION, created_at=datetime.now(UTC)))
    fake_kandev.calls.clear()

    report = sync.discover_new([_hint(young)])

    assert report.posted == [young.pending_id] and report.shown == {young.pending_id}
    called = [name for name, _ in fake_kandev.calls]
    assert called.count("conversation_bundle") == 1
    assert "list_pending" not in called  # nor its question total: the conversation shows all
    assert "question_total" not in called and "task" in called
    assert publisher.work_once() and gateway.card_of(young.pending_id) is not None
    card = store.cards.get(young.pending_id)
    assert card is not None and card.bundle == young


def test_a_hinted_bundle_whose_questions_are_not_all_written_is_looked_for_again(
    make_engine, fake_kandev: FakeKandev, store: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(discovery_module, "HINT_RETRY_S", 0.0)
    engine = make_engine(hinted=True)
    inbox = engine.new_bundles
    assert inbox is not None
    partial = fake_kandev.add(numbered_bundle(1, DB_QUESTION, created_at=datetime.now(UTC)))
    fake_kandev.totals[partial.pending_id] = 2  # its second question is still being written

    assert engine.discover_new([_hint(partial)]).posted == []
    assert store.cards.get(partial.pending_id) is None  # never posted with some of its questions
    assert inbox.wakes.wait(timeout=10.0) and inbox.drain() == [_hint(partial)]  # looked again

    fake_kandev.totals.pop(partial.pending_id)  # written
    assert engine.discover_new([_hint(partial)]).posted == [partial.pending_id]


@pytest.mark.usefixtures("no_hint_retries")
def test_in_a_burst_a_question_total_read_ahead_before_any_question_was_written_is_read_again(
    sync: SyncEngine, fake_kandev: FakeKandev, store: Database
) -> None:
    # A burst is looked for in the list. Read ahead, the bundle shows no question yet; when
    # the list shows it, one of two.
    hint = NewPending("pending-001", "task-001", "session-001")
    burst = [hint, *(NewPending(f"p-{n}", f"t-{n}", f"s-{n}") for n in range(ONE_BY_ONE))]
    fake_kandev.totals["pending-001"] = 0
    partial = numbered_bundle(1, DB_QUESTION, created_at=datetime.now(UTC))
    original = fake_kandev.list_pending

    def listed_meanwhile(*args, **kwargs):
        if "pending-001" not in fake_kandev.active:
            fake_kandev.add(partial)
            fake_kandev.totals["pending-001"] = 2
        return original(*args, **kwargs)

    fake_kandev.list_pending = listed_meanwhile  # type: ignore[method-assign]
    sync.discovery.read_ahead(hint)  # the total is read before the bundle is listed
    assert sync.discover_new(burst).posted == []
    assert store.cards.get("pending-001") is None  # never posted with only some of its questions
    assert len(fake_kandev.called("question_total")) >= 2
    assert fake_kandev.called("conversation_bundle") == []


def test_a_hinted_bundle_already_decided_is_not_posted_nor_looked_for_again(
    make_engine, fake_kandev: FakeKandev, store: Database
) -> None:
    engine = make_engine(hinted=True)
    inbox = engine.new_bundles
    assert inbox is not None
    bundle = fake_kandev.add(make_bundle(created_at=datetime.now(UTC)))
    fake_kandev.resolve_in_kandev(bundle.pending_id, [MONGO])  # answered before it was read

    report = engine.discover_new([_hint(bundle)])

    assert report.posted == [] and report.shown == {bundle.pending_id}
    assert store.cards.get(bundle.pending_id) is None
    assert inbox.wakes.wait(timeout=0.5) is False


@pytest.mark.parametrize("failure", [KandevProtocolError("a page of nonsense"), RuntimeError()])
def test_a_hinted_bundle_whose_conversation_cannot_be_read_is_looked_for_in_the_list(
    sync: SyncEngine, fake_kandev: FakeKandev, failure: Exception
) -> None:
    bundle = fake_kandev.add(make_bundle(created_at=datetime.now(UTC)))
    fake_kandev.fail("conversation_bundle", failure)

    assert sync.discover_new([_hint(bundle)]).posted == [bundle.pending_id]
    assert len(fake_kandev.called("list_pending")) == 1


def test_a_task_lookup_that_fails_while_read_ahead_still_fails_closed(
    sync: SyncEngine, fake_kandev: FakeKandev, store: Database, health: Health
) -> None:
    bundle = fake_kandev.add(make_bundle(created_at=datetime.now(UTC)))
    fake_kandev.fail("task", KandevUnavailable("Kandev is down"))

    assert sync.discover_new([_hint(bundle)]).posted == []

    assert (
        store.cards.get(bundle.pending_id) is None
    )  # not posted anywhere, the default channel least
    assert sync.unroutable[bundle.pending_id].reason.startswith("task lookup failed")
    fake_kandev.recover()
    sync.unroutable[bundle.pending_id].next_try = 0.0
    assert sync.discover_new([_hint(bundle)]).posted == [bundle.pending_id]


# ---- reads ahead: a few threads, stopped with the engine -------------------------------------


def _read_ahead_threads(besides: Collection[threading.Thread] = ()) -> list[threading.Thread]:
    """The read-ahead threads alive (other than ``besides``: those of earlier tests' engines)."""
    return [
        t
        for t in threading.enumerate()
        if t.name.startswith("sync-read-ahead") and t not in besides
    ]


def _hold_reads(fake_kandev: FakeKandev) -> tuple[list[str], threading.Event]:
    """Kandev's conversations, question totals and tasks of the tasks named ``held-…`` wait
    until the event is set: the held reads started so far (by method), and the event."""
    started: list[str] = []
    release = threading.Event()
    for method in ("conversation_bundle", "question_total", "task"):
        real = getattr(fake_kandev, method)

        def held(task_id, *args, _real=real, _method=method, **kwargs):
            if task_id.startswith("held-"):
                started.append(_method)
                release.wait(10.0)
            return _real(task_id, *args, **kwargs)

        setattr(fake_kandev, method, held)
    return started, release


def _held_burst(size: int = 20) -> list[NewPending]:
    """Hints of bundles not listed yet, whose reads ahead are held (:func:`_hold_reads`)."""
    return [NewPending(f"pending-{n:03}", f"held-{n:03}", f"session-{n:03}") for n in range(size)]


@pytest.fixture
def no_hint_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hinted bundle not listed is left to the next full read (no timers looking again)."""
    monkeypatch.setattr(discovery_module, "HINT_RETRIES", 0)


@pytest.mark.usefixtures("no_hint_retries")
def test_a_burst_of_hints_reads_ahead_on_a_bounded_number_of_threads(
    sync: SyncEngine, fake_kandev: FakeKandev
) -> None:
    started, release = _hold_reads(fake_kandev)
    burst = _held_burst()
    workers = discovery_module.READ_AHEAD_WORKERS
    before = _read_ahead_threads()
    try:
        sync.discover_new(burst)  # 40 reads ahead asked for, none waited on (none listed)
        _until(lambda: len(started) >= workers)
        time.sleep(0.2)  # time enough for more to start, were there room
        assert len(started) == workers  # the rest wait their turn
        assert len(_read_ahead_threads(before)) == workers
    finally:
        release.set()
    _until(lambda: len(started) == 2 * len(burst))  # then every one is read
    assert len(_read_ahead_threads(before)) <= workers


@pytest.mark.usefixtures("no_hint_retries")
def test_a_read_ahead_still_waiting_its_turn_is_made_when_the_bundle_is_posted(
    sync: SyncEngine, fake_kandev: FakeKandev
) -> None:
    started, release = _hold_reads(fake_kandev)
    try:
        sync.discover_new(_held_burst())  # every read-ahead thread is busy
        _until(lambda: len(started) == discovery_module.READ_AHEAD_WORKERS)
        young = fake_kandev.add(make_bundle(created_at=datetime.now(UTC)))

        assert sync.discover_new([_hint(young)]).posted == [young.pending_id]  # not held up

        assert len(started) == discovery_module.READ_AHEAD_WORKERS  # nothing else ran meanwhile
        totals, tasks = (
            [c for c in fake_kandev.called(method) if c["task_id"] == young.task_id]
            for method in ("conversation_bundle", "task")
        )
        assert (len(totals), len(tasks)) == (1, 1)  # read once each: the reads ahead dropped
    finally:
        release.set()


def test_closing_the_bot_stops_the_reads_ahead_of_its_sync_engine(
    sync: SyncEngine, fake_kandev: FakeKandev, store: Database, health: Health
) -> None:
    class Hints:
        def stop(self) -> None:
            pass

    started, release = _hold_reads(fake_kandev)
    before = _read_ahead_threads()
    bot = Bot(
        settings=None,  # type: ignore[arg-type]
        mode="socket",
        health=health,
        store=store,
        kandev=fake_kandev,  # type: ignore[arg-type]
        bolt=None,  # type: ignore[arg-type]
        hints=Hints(),  # type: ignore[arg-type]
        workers=[],
        lanes=[],
        wakeups=[],
        sync=sync,
    )
    for hint in _held_burst():
        sync.discovery.read_ahead(hint)
    waiting = [*sync.discovery._totals.values(), *sync.discovery._lookups.values()]
    _until(lambda: len(started) == discovery_module.READ_AHEAD_WORKERS)

    bot.close()
    release.set()

    _until(lambda: not _read_ahead_threads(before))  # the pool's threads end
    assert len(started) == discovery_module.READ_AHEAD_WORKERS  # the waiting reads were dropped
    assert sum(future.cancelled() for future in waiting) == len(waiting) - len(started)
    sync.discovery.read_ahead(NewPending("pending-late", "task-late", "session-late"))
    assert (
        "pending-late" not in sync.discovery._totals
    )  # closed: read when the bundle is posted instead
    assert not _read_ahead_threads(before)


def test_reconnects_ask_for_a_full_read_at_most_once_per_poll_interval(sync: SyncEngine) -> None:
    """A /ws that drops every link at once reconnects again and again: only the first reconnect
    of each poll interval asks for a read of the whole list (the regular polls go on)."""
    clock = FakeMonotonic()
    sync.monotonic = clock.monotonic
    asked = []
    for _ in range(10):  # a reconnect every half second for 5 s
        sync.on_connected()
        asked.append(sync.wakeup.take())
        clock.advance(0.5)
    assert asked == [True] + [False] * 9
    clock.advance(sync.poll_interval)
    sync.on_connected()
    assert sync.wakeup.take()
