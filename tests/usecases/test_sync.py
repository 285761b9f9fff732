"""SyncEngine through the fakes at its edges: new bundles are claimed and posted once by the
real publisher; bundles resolved in Kandev get their card edited."""

from __future__ import annotations

import pytest

from bot.domain import CardState
from bot.health import Health
from bot.kandev.errors import KandevUnavailable
from bot.kandev.models import Answer
from bot.publisher import Publisher
from bot.store import Store
from bot.sync import SyncEngine
from tests.factories import CHANNEL, make_bundle, numbered_bundle
from tests.fakes import FakeKandev, FakeSlackGateway


def test_a_new_bundle_is_claimed_and_posted_once(
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Store,
) -> None:
    bundle = fake_kandev.add(make_bundle(), title="Pick a datastore", workspace_name="Platform")

    report = sync.reconcile_once()
    assert publisher.work_once()

    assert (report.listed, report.posted) == (1, [bundle.pending_id])
    found = gateway.card_of(bundle.pending_id)
    assert found is not None
    channel, ts, message = found
    card = store.get(bundle.pending_id)
    assert card is not None and (card.channel, card.ts) == (channel, ts) == (CHANNEL, ts)
    assert (card.task.title, card.task.workspace_name) == ("Pick a datastore", "Platform")
    assert "Which database should we use?" in message.text
    assert sync.reconcile_once().posted == []
    assert not publisher.work_once()
    assert len(gateway.called("chat.postMessage")) == 1


def test_a_bundle_answered_in_kandev_gets_its_card_edited(
    posted,
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Store,
) -> None:
    card = posted(make_bundle())
    answer = Answer(question_id="q1", selected_options=["q1_opt1"])
    fake_kandev.resolve_in_kandev(card.pending_id, [answer])

    report = sync.reconcile_once()
    assert publisher.work_once()

    assert report.resolved == [card.pending_id]
    resolved = store.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert resolved.state is CardState.ANSWERED and resolved.outcome.via == "kandev"
    [edit] = gateway.called("chat.update")
    assert edit["ts"] == card.ts and "PostgreSQL" in edit["message"].text


def test_kandev_unreachable_fails_the_cycle_and_claims_nothing(
    sync: SyncEngine, fake_kandev: FakeKandev, store: Store
) -> None:
    bundle = fake_kandev.add(make_bundle())
    fake_kandev.fail()

    with pytest.raises(KandevUnavailable):
        sync.reconcile_once()

    assert store.get(bundle.pending_id) is None
    fake_kandev.recover()
    assert sync.reconcile_once().posted == [bundle.pending_id]


def test_a_post_slack_refuses_until_someone_acts_is_kept_and_reported(
    sync: SyncEngine,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Store,
    health: Health,
) -> None:
    bundle = fake_kandev.add(numbered_bundle(1))
    gateway.fail("chat.postMessage", "not_in_channel")

    sync.reconcile_once()
    assert publisher.work_once()

    assert store.get(bundle.pending_id).ts is None  # type: ignore[union-attr]
    assert store.outbox_pending_count() == 1
    [reason] = health.report().reasons
    assert reason.startswith("slack: chat.postMessage failed in C0QUESTION: not_in_channel")
