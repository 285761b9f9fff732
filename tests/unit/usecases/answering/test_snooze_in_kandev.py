"""Kandev's inbox in step (issue 32, point 7): a linked person's Snooze in Slack snoozes the item
in their own Kandev Needs-you inbox too, never for less than Slack shows; Unsnooze and the
snooze's end clear it there; a Kandev failure is told and never loses the Slack snooze; a 401
breaks their link; ``bot`` routes and people not linked leave Kandev's inbox alone."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kandev_slack.config.routing import Routing
from kandev_slack.core.domain import Card
from kandev_slack.core.snooze import kandev_snooze
from kandev_slack.kandev.errors import KandevAuthError, KandevProtocolError
from kandev_slack.ops.health import Health
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from kandev_slack.store.cards.copies import Copy
from kandev_slack.surfaces.snooze import snoozed_message, unsnoozed_message
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.admission import Admission, Admitted, Request
from kandev_slack.usecases.answering.snooze import Snoozed, Snoozes, SnoozeWorker, Unsnoozed
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.views.seeing import Seeing
from tests.kit.factories import CHANNEL
from tests.kit.fakes import FakeClock, FakeKandev, FakeSlackGateway
from tests.unit.usecases.answering.test_snooze import is_collapsed
from tests.unit.usecases.test_card_messages import add_copy

ANA, BOB = "U0ANA00001", "U0BOB00002"
ANA_TOKEN = "kandev_pat_0a1b2c3d_" + "A" * 43


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 12, 1, 10, 0, tzinfo=UTC))


@pytest.fixture(params=["linked"])
def routing(request: pytest.FixtureRequest) -> Routing:
    """Every question in the channel, with people's own accounts (``linked``) unless a test
    asks for another mode (``@pytest.mark.parametrize("routing", ["bot"], indirect=True)``)."""
    return Routing(default_channel=CHANNEL, default_identity=request.param)


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Database]:
    vault = Vault.from_keys(Vault.new_key())
    store = Database(f"sqlite:///{tmp_path / 'bot.db'}", clock=clock, vault=vault)
    yield store
    store.close()


@pytest.fixture
def ana_kandev(fake_kandev: FakeKandev) -> FakeKandev:
    """Ana's own Kandev client (she sees the card's workspace)."""
    mine = FakeKandev(fake_kandev.base_url)
    mine.workspace_list = list(fake_kandev.workspace_list)
    return mine


@pytest.fixture
def identities(
    fake_kandev: FakeKandev, store: Database, answerers: Answerers, ana_kandev: FakeKandev
) -> Identities:
    store.links.link(ANA, "u-ana", "Ana", "ana@example.com", ANA_TOKEN)  # Bob is not linked
    return Identities(
        bot=fake_kandev,
        links=store.links,
        answerers=answerers,
        client_for=lambda token: ana_kandev,
    )


@pytest.fixture
def snoozes(store: Database, publisher: Publisher, identities: Identities) -> Snoozes:
    return Snoozes(
        store.snoozes,
        store.cards,
        store.audit_log,
        publisher.wake,
        publisher.changed,
        seeing=Seeing(identities),
    )


def on_home(card: Card, user: str, action: str = "snooze", hours: int = 4) -> Request:
    return Request(
        user_id=user,
        action=action,  # type: ignore[arg-type]
        source="slack:select" if action == "snooze" else "slack:button",
        via="home",
        pending_id=card.pending_id,
        hours=hours if action == "snooze" else 0,
    )


def admitted(admission: Admission, request: Request) -> Admitted:
    result = admission.admit(request)
    assert isinstance(result, Admitted), result
    return result


def test_the_kandev_snooze_is_never_shorter_than_slacks() -> None:
    assert [kandev_snooze(h) for h in (1, 2, 4, 5, 23, 24)] == [
        "1h",
        "4h",
        "4h",
        "24h",
        "24h",
        "24h",
    ]
    assert kandev_snooze(25) is None  # longer than any: dismissed, cleared when Slack's ends
    with pytest.raises(ValueError):
        kandev_snooze(0)


@pytest.mark.parametrize("hours, there", [(1, "1h"), (4, "4h"), (24, "24h")])
def test_a_linked_persons_snooze_and_unsnooze_reach_their_kandev_inbox(
    admission: Admission,
    snoozes: Snoozes,
    card: Card,
    ana_kandev: FakeKandev,
    hours: int,
    there: str,
) -> None:
    snoozed = snoozes.snooze(admitted(admission, on_home(card, ANA, hours=hours)), hours)
    assert isinstance(snoozed, Snoozed) and snoozed.inbox == "in_step"
    assert ana_kandev.inbox == {card.pending_id: there}
    assert f"snoozed there for {there[:-1]} h" in snoozed_message(snoozed.snooze, snoozed.inbox)

    back = snoozes.unsnooze(admitted(admission, on_home(card, ANA, "unsnooze")))
    assert isinstance(back, Unsnoozed) and back.inbox == "in_step"
    assert ana_kandev.inbox == {}
    assert "back in your Kandev Needs-you inbox too" in unsnoozed_message(back.inbox)


def test_someone_not_linked_leaves_kandevs_inbox_alone(
    admission: Admission, snoozes: Snoozes, card: Card, ana_kandev: FakeKandev
) -> None:
    snoozed = snoozes.snooze(admitted(admission, on_home(card, BOB)), 4)
    assert isinstance(snoozed, Snoozed) and snoozed.inbox is None
    assert ana_kandev.calls == [] and snoozed_message(snoozed.snooze).endswith("sooner.")


@pytest.mark.parametrize("routing", ["bot"], indirect=True)
def test_a_bot_route_leaves_kandevs_inbox_alone(
    admission: Admission, snoozes: Snoozes, card: Card, ana_kandev: FakeKandev
) -> None:
    snoozed = snoozes.snooze(admitted(admission, on_home(card, ANA)), 4)
    assert isinstance(snoozed, Snoozed) and snoozed.inbox is None
    assert ana_kandev.calls == []


def test_a_kandev_failure_is_told_and_the_slack_snooze_holds(
    admission: Admission, snoozes: Snoozes, card: Card, ana_kandev: FakeKandev, store: Database
) -> None:
    ana_kandev.fail("hide_in_inbox", KandevProtocolError("HTTP 404: not found"))
    snoozed = snoozes.snooze(admitted(admission, on_home(card, ANA)), 4)
    assert isinstance(snoozed, Snoozed) and snoozed.inbox == "failed"
    assert store.snoozes.snooze_of(ANA, card.pending_id) is not None  # the Slack snooze holds
    told = snoozed_message(snoozed.snooze, snoozed.inbox)
    assert told.startswith("💤 Snoozed for 4 h") and "could not be changed" in told

    ana_kandev.fail("show_in_inbox", KandevProtocolError("HTTP 500"))
    back = snoozes.unsnooze(admitted(admission, on_home(card, ANA, "unsnooze")))
    assert isinstance(back, Unsnoozed) and back.inbox == "failed"
    assert store.snoozes.snooze_of(ANA, card.pending_id) is None  # unsnoozed in Slack all the same


def test_a_refused_token_is_told_and_breaks_the_link(
    admission: Admission, snoozes: Snoozes, card: Card, ana_kandev: FakeKandev, store: Database
) -> None:
    ana_kandev.fail("hide_in_inbox", KandevAuthError())
    snoozed = snoozes.snooze(admitted(admission, on_home(card, ANA)), 1)
    assert isinstance(snoozed, Snoozed) and snoozed.inbox == "refused"
    assert store.snoozes.snooze_of(ANA, card.pending_id) is not None
    assert "connect your Kandev account again" in snoozed_message(snoozed.snooze, "refused")
    link = store.links.get(ANA)
    assert link is not None and link.broken


def test_the_end_of_a_slack_snooze_clears_it_in_kandev(
    admission: Admission, snoozes: Snoozes, card: Card, ana_kandev: FakeKandev, clock: FakeClock
) -> None:
    snoozes.snooze(admitted(admission, on_home(card, ANA)), 1)
    assert ana_kandev.inbox == {card.pending_id: "1h"}
    worker = SnoozeWorker(snoozes, Health())
    clock.advance(3601)
    assert worker.work_once() == 1
    assert ana_kandev.inbox == {}
    assert worker.work_once() == 0
    assert len(ana_kandev.called("show_in_inbox")) == 1  # once


def test_a_failure_at_the_snooze_s_end_is_logged_and_the_end_holds(
    admission: Admission,
    snoozes: Snoozes,
    card: Card,
    ana_kandev: FakeKandev,
    clock: FakeClock,
    store: Database,
    caplog: pytest.LogCaptureFixture,
) -> None:
    snoozes.snooze(admitted(admission, on_home(card, ANA)), 1)
    ana_kandev.fail("show_in_inbox", KandevProtocolError("HTTP 502"))
    clock.advance(3601)
    assert SnoozeWorker(snoozes, Health()).work_once() == 1
    assert store.snoozes.snooze_of(ANA, card.pending_id) is None
    assert "kandev inbox show of" in caplog.text and "failed" in caplog.text


# ---- the DM cards follow Kandev's inbox (what they hid there, after the card was posted) ----


@pytest.fixture
def following(store: Database, publisher: Publisher, identities: Identities) -> Snoozes:
    """Snoozes whose reads of people's Kandev inboxes are never kept (each round reads)."""
    return Snoozes(
        store.snoozes,
        store.cards,
        store.audit_log,
        publisher.wake,
        publisher.changed,
        seeing=Seeing(identities, hidden_ttl_s=0),
    )


@pytest.fixture
def anas_dm(store: Database, publisher: Publisher, card: Card, drain) -> Copy:
    """Ana's DM card of ``card`` (a subscription), posted."""
    add_copy(store, publisher, card, f"dm:{card.pending_id}:{ANA}", ANA)
    drain()
    copy = store.cards.message_get(f"dm:{card.pending_id}:{ANA}")
    assert copy is not None and copy.ts
    return copy


def test_a_hide_in_kandev_collapses_the_posted_dm_card_and_showing_restores_it(
    following: Snoozes,
    card: Card,
    anas_dm: Copy,
    ana_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    store: Database,
    drain,
) -> None:
    assert following.follow_kandev() == 0  # nothing hidden: nothing changes
    assert not is_collapsed(gateway, anas_dm)
    ana_kandev.inbox[card.pending_id] = "1h"  # Ana snoozed it in Kandev's own inbox
    assert following.follow_kandev() == 1
    drain()
    assert is_collapsed(gateway, anas_dm)
    mirror = store.snoozes.snooze_of(ANA, card.pending_id)
    assert mirror is not None and mirror.from_kandev
    assert following.follow_kandev() == 0  # once: the next round changes nothing
    assert ana_kandev.called("hide_in_inbox") == []  # never echoed back to Kandev

    del ana_kandev.inbox[card.pending_id]  # un-snoozed there (or its snooze ran out)
    assert following.follow_kandev() == 1
    drain()
    assert not is_collapsed(gateway, anas_dm)
    assert store.snoozes.snooze_of(ANA, card.pending_id) is None
    assert ana_kandev.called("show_in_inbox") == []
    audited = [(e.action, e.source) for e in store.audit_log.audit_entries(card.pending_id)]
    assert ("snooze", "kandev:inbox") in audited and ("unsnooze", "kandev:inbox") in audited


def test_a_dismissal_in_kandev_holds_past_the_mirror_s_length(
    following: Snoozes,
    card: Card,
    anas_dm: Copy,
    ana_kandev: FakeKandev,
    store: Database,
    clock: FakeClock,
) -> None:
    ana_kandev.inbox[card.pending_id] = "dismissed"
    assert following.follow_kandev() == 1
    first = store.snoozes.snooze_of(ANA, card.pending_id)
    assert first is not None
    clock.advance(13 * 3600)  # past half its length: renewed, never ended while Kandev hides it
    assert following.follow_kandev() == 1
    renewed = store.snoozes.snooze_of(ANA, card.pending_id)
    assert renewed is not None and renewed.from_kandev and renewed.until > first.until
    assert following.end_due() == 0


def test_a_slack_snooze_is_left_to_slack_and_its_end_not_mirrored_back(
    admission: Admission,
    following: Snoozes,
    card: Card,
    anas_dm: Copy,
    ana_kandev: FakeKandev,
    store: Database,
) -> None:
    snoozed = following.snooze(admitted(admission, on_home(card, ANA)), 4)
    assert isinstance(snoozed, Snoozed) and ana_kandev.inbox == {card.pending_id: "4h"}
    assert following.follow_kandev() == 0  # Kandev hides it because Slack does: unchanged
    read = store.snoozes.snooze_of(ANA, card.pending_id)
    assert read is not None and not read.from_kandev


def test_a_kandev_failure_changes_nothing_and_a_refusal_breaks_the_link(
    following: Snoozes,
    card: Card,
    anas_dm: Copy,
    ana_kandev: FakeKandev,
    store: Database,
    caplog: pytest.LogCaptureFixture,
) -> None:
    ana_kandev.inbox[card.pending_id] = "4h"
    assert following.follow_kandev() == 1
    ana_kandev.inbox.clear()
    ana_kandev.fail("hidden_in_inbox", KandevProtocolError("HTTP 502"), times=1)
    assert following.follow_kandev() == 0  # could not be read: the mirror holds
    assert store.snoozes.snooze_of(ANA, card.pending_id) is not None
    assert "could not read a linked person's Kandev inbox" in caplog.text

    ana_kandev.fail("hidden_in_inbox", KandevAuthError())
    assert following.follow_kandev() == 0
    link = store.links.get(ANA)
    assert link is not None and link.broken
    assert following.follow_kandev() == 0  # broken: not read again
    assert len(ana_kandev.called("hidden_in_inbox")) == 3


def test_only_holders_of_dm_cards_in_linked_routes_are_read(
    following: Snoozes, card: Card, ana_kandev: FakeKandev, store: Database
) -> None:
    ana_kandev.inbox[card.pending_id] = "1h"
    assert following.follow_kandev() == 0  # Ana holds no DM card of it
    assert ana_kandev.called("hidden_in_inbox") == []
    assert store.snoozes.snooze_of(ANA, card.pending_id) is None


@pytest.mark.parametrize("routing", ["bot"], indirect=True)
def test_a_bot_route_s_dm_cards_do_not_follow_kandev(
    following: Snoozes, card: Card, anas_dm: Copy, ana_kandev: FakeKandev
) -> None:
    ana_kandev.inbox[card.pending_id] = "1h"
    assert following.follow_kandev() == 0
    assert ana_kandev.called("hidden_in_inbox") == []
