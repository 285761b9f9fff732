"""Noticing one new bundle costs the same whatever waits (issue 35, point 2): a push hint's
Kandev reads, the bundles they carry and the store's statements, from the hint to the card
posted, are the same with 10 and with 300 bundles waiting.

The waiting bundles were all created within the same second (a queue built in a burst, or one
that built while the bot was down): a read of "the newest part of the list" then carries every
one of them, which is what the hint read before (issue 35)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import event

from kandev_slack.config.routing import Routing
from kandev_slack.core.domain import NewCard
from kandev_slack.core.signals import Signal
from kandev_slack.kandev.hints import NewPending
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.usecases.tasks import TaskDirectory
from kandev_slack.wiring import build_publisher, build_sync
from tests.kit.factories import CHANNEL, KANDEV_URL, make_question, make_task, numbered_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway

#: Cached by the Kandev client (a lookup read ahead may or may not be waited for).
CACHED = frozenset({"task", "workspaces"})


@dataclass
class Cost:
    """What noticing one bundle took: Kandev calls by method (but the cached lookups), the
    bundles their replies carried, and the store's statements."""

    kandev: Counter[str] = field(default_factory=Counter)
    bundles: int = 0
    statements: int = 0


class CountingKandev(FakeKandev):
    """The fake Kandev, counting the bundles its replies carry while ``cost`` is set."""

    cost: Cost | None = None

    def list_pending(self, *args: Any, **kwargs: Any) -> Any:
        found = super().list_pending(*args, **kwargs)
        if self.cost is not None:
            self.cost.bundles += len(found)
        return found

    def conversation_bundle(self, *args: Any, **kwargs: Any) -> Any:
        found = super().conversation_bundle(*args, **kwargs)
        if self.cost is not None and found is not None:
            self.cost.bundles += 1
        return found


@contextmanager
def statements(store: Database, cost: Cost) -> Iterator[None]:
    def count(*_args: Any) -> None:
        cost.statements += 1

    engine = store.sql.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", count)


def noticing(tmp_path: Path, waiting: int) -> Cost:
    """A bot whose store has the cards of ``waiting`` bundles (all created in one second,
    each asking its own question), and which read them all once: one more is hinted."""
    store = Database(f"sqlite:///{tmp_path / f'{waiting}.db'}")
    kandev, health = CountingKandev(KANDEV_URL), Health()
    publisher = build_publisher(
        store.outbox,
        store.cards,
        store.audit_log,
        FakeSlackGateway(),
        kandev_url=KANDEV_URL,
        health=health,
        post_spacing_s=0,
    )
    sync = build_sync(
        kandev,  # type: ignore[arg-type]
        store.cards,
        store.submissions,
        store.audit_log,
        store.retention,
        Routing(default_channel=CHANNEL),
        TaskDirectory(kandev),  # type: ignore[arg-type]
        publisher,
        health,
        Signal("sync"),
    )
    try:
        now = datetime.now(UTC).replace(microsecond=0)
        for n in range(1, waiting + 1):
            question = make_question(prompt=f"Question {n}?")
            bundle = kandev.add(numbered_bundle(n, question, created_at=now))
            store.cards.record_card(NewCard(bundle, make_task(bundle.task_id), CHANNEL))
            store.cards.mark_posted(bundle.pending_id, CHANNEL, f"1600000000.{n:06d}")
        sync.reconcile_once()  # the full read: every waiting bundle is known to have a card
        new = numbered_bundle(waiting + 1, make_question(prompt="A new question?"), created_at=now)
        kandev.add(new)
        kandev.calls.clear()
        cost = kandev.cost = Cost()
        with statements(store, cost):
            report = sync.discover_new([NewPending(new.pending_id, new.task_id, new.session_id)])
            while publisher.work_once():
                pass
        kandev.cost = None
        assert report.posted == [new.pending_id]
        card = store.cards.get(new.pending_id)
        assert card is not None and card.ts is not None
        cost.kandev.update(name for name, _ in kandev.calls if name not in CACHED)
        return cost
    finally:
        sync.close()
        store.close()


def test_noticing_one_new_bundle_costs_the_same_with_10_or_300_waiting(tmp_path: Path) -> None:
    few, many = noticing(tmp_path, 10), noticing(tmp_path, 300)

    assert many == few
    assert few.bundles == 1  # the hinted bundle alone was read, and no list
    assert few.kandev == Counter({"conversation_bundle": 1})
