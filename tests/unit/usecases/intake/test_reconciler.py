"""Bundles resolved in Kandev: a push hint naming a session reads that session's conversation
only (never the active list); the full read of the list still happens every poll interval."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from kandev_slack.config.routing import Routing
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import CardState
from kandev_slack.core.signals import Inbox, Signal
from kandev_slack.kandev.errors import KandevToolError
from kandev_slack.kandev.hints import NewPending, Resolved
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.usecases.intake import sync as sync_module
from kandev_slack.usecases.intake.sync import SyncEngine
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.wiring import build_sync
from tests.kit.factories import numbered_bundle
from tests.kit.fakes import FakeKandev

ANSWER = [Answer(question_id="q1", selected_options=["q1_opt1"])]
KANDEV_READS = ("list_active", "list_pending", "final_state", "question_total")


@pytest.fixture
def engine(
    fake_kandev: FakeKandev,
    store: Database,
    routing: Routing,
    tasks,
    publisher: Publisher,
    health: Health,
) -> Iterator[SyncEngine]:
    """Wired like the app's: both kinds of hints handed over on the hints loop."""
    hinted = Signal("hinted")
    made = build_sync(
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
        new_bundles=Inbox[NewPending]("new bundles", wakes=hinted),
        resolved_sessions=Inbox[Resolved]("resolved sessions", wakes=hinted),
    )
    yield made
    made.close()


def _reads(fake_kandev: FakeKandev) -> list[tuple[str, str | None]]:
    """The Kandev reads made: (method, the session a conversation read named)."""
    return [
        (name, arguments.get("session_id"))
        for name, arguments in fake_kandev.calls
        if name in KANDEV_READS
    ]


def _until(predicate: Callable[[], object], why: object = None) -> None:
    deadline = time.monotonic() + 10.0
    while not predicate():
        assert time.monotonic() < deadline, why
        time.sleep(0.01)


def test_a_resolved_hint_reads_that_session_s_conversation_and_no_list(
    engine: SyncEngine, fake_kandev: FakeKandev, store: Database
) -> None:
    one, two = (fake_kandev.add(numbered_bundle(n)) for n in (1, 2))
    assert sorted(engine.reconcile_once().posted) == [one.pending_id, two.pending_id]
    fake_kandev.resolve_in_kandev(one.pending_id, ANSWER)
    fake_kandev.calls.clear()

    report = engine.resolve_sessions([Resolved(one.session_id)])

    assert report.resolved == [one.pending_id]
    assert _reads(fake_kandev) == [("final_state", one.session_id)]
    card = store.cards.get(one.pending_id)
    assert card is not None and card.state is CardState.ANSWERED
    assert card.outcome is not None and card.outcome.via == "kandev"
    assert store.cards.get(two.pending_id).state is CardState.PENDING  # type: ignore[union-attr]


def test_a_resolved_hint_for_a_session_without_cards_reads_nothing(
    engine: SyncEngine, fake_kandev: FakeKandev
) -> None:
    fake_kandev.add(numbered_bundle(1))
    engine.reconcile_once()
    fake_kandev.calls.clear()

    assert engine.resolve_sessions([Resolved("session-elsewhere")]).resolved == []
    assert _reads(fake_kandev) == []


def test_a_hint_without_a_session_asks_for_a_full_read(engine: SyncEngine) -> None:
    engine.wakeup.take()
    engine.on_resolved(Resolved(""))
    assert engine.wakeup.is_raised()
    assert engine.resolved_sessions is not None and engine.resolved_sessions.drain() == []


def test_a_session_not_shown_decided_yet_is_read_again_a_few_times(
    engine: SyncEngine, fake_kandev: FakeKandev, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sync_module, "RESOLVED_RETRY_S", 0.0)
    bundle = fake_kandev.add(numbered_bundle(1))
    engine.reconcile_once()
    inbox = engine.resolved_sessions
    assert inbox is not None
    hint = Resolved(bundle.session_id)
    for _ in range(sync_module.RESOLVED_RETRIES):
        inbox.wakes.take()
        assert engine.resolve_sessions([hint]).resolved == []  # still pending in Kandev
        assert inbox.wakes.wait(timeout=10.0)  # handed over again
        assert inbox.drain() == [hint]
    inbox.wakes.take()
    engine.resolve_sessions([hint])
    assert inbox.wakes.wait(timeout=0.3) is False  # left to the full reads


def test_on_the_loops_a_resolved_hint_ends_the_card_without_a_list_read_while_polls_go_on(
    engine: SyncEngine, fake_kandev: FakeKandev, store: Database
) -> None:
    engine.poll_interval = 3600.0  # only the start-up read, until told otherwise
    bundle = fake_kandev.add(numbered_bundle(1))
    stop = threading.Event()
    loops = [
        threading.Thread(target=engine.run, args=(stop,), daemon=True),
        threading.Thread(target=engine.run_hints, args=(stop,), daemon=True),
    ]

    def full_reads() -> int:
        return len(fake_kandev.called("list_active"))

    for loop in loops:
        loop.start()
    try:
        _until(lambda: store.cards.get(bundle.pending_id) is not None, fake_kandev.calls)
        fake_kandev.resolve_in_kandev(bundle.pending_id, ANSWER)
        assert full_reads() == 1
        engine.on_resolved(Resolved(bundle.session_id))
        _until(
            lambda: store.cards.get(bundle.pending_id).state is CardState.ANSWERED,  # type: ignore[union-attr]
            fake_kandev.calls,
        )
        assert ("final_state", bundle.session_id) in _reads(fake_kandev)
        assert full_reads() == 1  # the hint read no list
        # The poll still reads the whole list every interval.
        engine.poll_interval = 0.2
        engine.wakeup.raise_()
        _until(lambda: full_reads() == 2)
        polled = full_reads()
        time.sleep(1.0)
        assert 3 <= full_reads() - polled <= 7
    finally:
        stop.set()
        engine.wakeup.raise_()
        assert engine.new_bundles is not None
        engine.new_bundles.wakes.raise_()
        for loop in loops:
            loop.join(5)
    assert not any(loop.is_alive() for loop in loops)


def test_a_resolved_hint_whose_conversation_is_unreadable_leaves_the_card_pending(
    engine: SyncEngine, fake_kandev: FakeKandev, store: Database, health: Health
) -> None:
    """A tool error on the session's read is "try again" (the hint's retries, then the full
    reads), never "Unavailable"; /healthz says so until a read succeeds."""
    bundle = fake_kandev.add(numbered_bundle(1))
    engine.reconcile_once()
    fake_kandev.resolve_in_kandev(bundle.pending_id, ANSWER)
    fake_kandev.fail("final_state", KandevToolError("INTERNAL", "database is locked"), times=1)

    assert engine.resolve_sessions([Resolved(bundle.session_id)]).resolved == []
    assert store.cards.get(bundle.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert [r for r in health.report().reasons if r.startswith("final_state:")]

    assert engine.resolve_sessions([Resolved(bundle.session_id)]).resolved == [bundle.pending_id]
    assert store.cards.get(bundle.pending_id).state is CardState.ANSWERED  # type: ignore[union-attr]
    assert not [r for r in health.report().reasons if r.startswith("final_state:")]
