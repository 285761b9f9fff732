"""Personal notifications: the subcommands, a DM card per new matching bundle the subscriber may
answer (once), the App Home's list with remove buttons, and an answer given on a DM card."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from slack_bolt import App

from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.domain import Card, CardState
from kandev_slack.kandev.models import Workspace
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.followups.subscriptions import (
    BadSubscription,
    SubscriptionCommand,
    SubscriptionNotifier,
    SubscriptionService,
    parse_command,
)
from kandev_slack.usecases.outbox.publisher import Publisher
from tests.kit.factories import ALICE_ID, CHANNEL, make_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway
from tests.unit.slack.slack_bodies import command, dispatch, eventually, home_click

BOB = "U0BOB00002"


def test_parse_command() -> None:
    assert parse_command("") is None
    assert parse_command("Platform") is None
    assert parse_command("subscriber") is None
    assert parse_command("subscribe") == SubscriptionCommand("subscribe", "all")
    assert parse_command("  SUBSCRIBE   all ") == SubscriptionCommand("subscribe", "all")
    assert parse_command("subscribe  My   Space") == SubscriptionCommand(
        "subscribe", "workspace", "My Space"
    )
    assert parse_command("subscribe label:db") == SubscriptionCommand("subscribe", "label", "db")
    assert parse_command("unsubscribe") == SubscriptionCommand("unsubscribe", None)
    assert parse_command("unsubscribe label:db") == SubscriptionCommand(
        "unsubscribe", "label", "db"
    )
    assert parse_command("subscriptions") == SubscriptionCommand("subscriptions")
    assert parse_command("subscribe label:") == BadSubscription("no_label")
    assert parse_command("subscriptions now") == BadSubscription("trailing")
    assert parse_command("subscribe " + "x" * 101) == BadSubscription("too_long")


@pytest.fixture
def platform(fake_kandev: FakeKandev) -> None:
    """Kandev lists the workspace "Platform" (ws-1)."""
    fake_kandev.workspace_list.append(Workspace(id="ws-1", name="Platform"))


@pytest.fixture
def service(store: Database, fake_kandev: FakeKandev, platform: None) -> SubscriptionService:
    return SubscriptionService(store.followups, fake_kandev)


def say(service: SubscriptionService, text: str, user: str = ALICE_ID) -> str:
    parsed = parse_command(text)
    assert parsed is not None
    return service.reply(parsed, user).text


def test_subscribe_list_and_unsubscribe(service: SubscriptionService, store: Database) -> None:
    assert say(service, "subscribe platform") == (
        "🔔 Subscribed: you will get a direct message for new questions in workspace *Platform*."
    )
    assert say(service, "subscribe ws-1").startswith("You are already subscribed")
    assert say(service, "subscribe Mobile").startswith("No Kandev workspace is named *Mobile*")
    assert say(service, "subscribe label:db").startswith("🔔 Subscribed")
    assert say(service, "subscribe").startswith("🔔 Subscribed")
    assert say(service, "subscriptions") == (
        "Your subscriptions (a direct message for each):\n"
        "• every new question you may answer\n"
        "• new questions labelled `db`\n"
        "• new questions in workspace *Platform*"
    )
    assert say(service, "subscriptions", BOB).startswith("You have no subscriptions.")
    assert say(service, "unsubscribe PLATFORM") == (
        "🔕 Unsubscribed from new questions in workspace *Platform*."
    )
    assert say(service, "unsubscribe label:x").startswith("You were not subscribed")
    assert say(service, "unsubscribe") == "🔕 Unsubscribed from all 2 of your subscriptions."
    assert store.followups.subscriptions_of(ALICE_ID) == []


def test_a_subcommand_that_cannot_be_read_is_explained_with_the_usage(
    service: SubscriptionService,
) -> None:
    assert say(service, "subscriptions now").startswith(
        "`subscriptions` takes nothing after it. `/kandev-questions subscribe`"
    )
    assert say(service, "subscribe " + "x" * 101).startswith("That is too long (over 100). `")
    assert say(service, "unsubscribe label:").startswith("Name the label after `label:`. `")


@pytest.fixture
def routing() -> Routing:
    # Platform's questions may be answered by Alice only; the rest by anyone.
    rule = RouteRule(workspace="Platform", channel=CHANNEL, answerers=frozenset({ALICE_ID}), line=1)
    return Routing(default_channel=CHANNEL, rules=(rule,))


@pytest.fixture
def notifier(store: Database, answerers: Answerers, publisher: Publisher) -> SubscriptionNotifier:
    return SubscriptionNotifier(store.followups, answerers, publisher, Health())


@pytest.fixture
def posted_to_alice(
    posted, store: Database, notifier: SubscriptionNotifier, drain: Callable[[], None]
) -> Callable[[], Card]:
    """``posted_to_alice()``: Alice subscribes to every new question, the story's bundle is
    posted, and its DM card is sent to her; returns the bundle's card."""

    def arrange() -> Card:
        store.followups.subscribe(ALICE_ID, "all")
        card = posted(make_bundle())
        assert notifier.work_once() == 1
        drain()
        return card

    return arrange


def dm_posts(gateway: FakeSlackGateway) -> list[dict]:
    return [c for c in gateway.called("chat.postMessage") if c["channel"].startswith("D")]


def test_a_dm_card_for_each_new_bundle_a_subscriber_may_answer_once(
    posted,
    posted_to_alice,
    store: Database,
    notifier: SubscriptionNotifier,
    gateway: FakeSlackGateway,
) -> None:
    before = posted(make_bundle(pending_id="before", task_id="t-before"))
    store.followups.subscribe(
        BOB, "workspace", "platform"
    )  # Bob may not answer Platform's questions
    card = posted_to_alice()  # one DM card: Alice's
    assert notifier.work_once() == 0

    (dm,) = dm_posts(gateway)
    assert dm["channel"] == "D" + ALICE_ID[1:] and dm["pending_id"] == card.pending_id
    # Why it came leads the DM card's grey line (no header above the card: "one glance").
    meta = next(b for b in dm["message"].blocks if b.get("block_id") == "kq_meta")
    assert meta["elements"][0]["text"].startswith(
        f"🔔 Every new question you may answer (you subscribed) — first asked in <#{CHANNEL}> · "
    )
    assert [m.pending_id for m in store.cards.messages_of(before.pending_id)] == []  # not new


def test_an_answer_on_a_dm_card_is_credited_and_every_copy_shows_it(
    posted_to_alice, store: Database, drain, gateway: FakeSlackGateway, alice_answers
) -> None:
    card = posted_to_alice()
    (copy,) = store.cards.messages_of(card.pending_id)
    alice_answers(card, on=copy)
    drain()
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.state is CardState.ANSWERED
    assert resolved.outcome is not None and resolved.outcome.by_user == ALICE_ID
    edited = {c["channel"]: c for c in gateway.called("chat.update")}
    assert set(edited) == {CHANNEL, copy.channel}
    for call in edited.values():
        assert f"Answered by <@{ALICE_ID}>" in json.dumps(call["message"].blocks)


@pytest.mark.usefixtures("platform")
def test_the_command_and_the_home_remove_button(
    bolt: App, services, store: Database, gateway: FakeSlackGateway
) -> None:
    status, acked = dispatch(bolt, command("subscribe Platform"))
    assert status == 200 and acked["text"].startswith("🔔 Subscribed")
    view = services.home.build(ALICE_ID)
    texts = json.dumps(view["blocks"])
    assert "Your notifications" in texts and "workspace *Platform*" in texts

    status, _ = dispatch(bolt, home_click(view, text="Remove"))
    assert status == 200
    eventually(lambda: store.followups.subscriptions_of(ALICE_ID) == [])
    published = eventually(lambda: gateway.called("views.publish"))
    assert "Unsubscribed from new questions in workspace" in json.dumps(published[-1]["view"])


def test_when_slack_cannot_say_who_may_answer_the_dm_cards_wait_for_the_next_round(
    store: Database,
    fake_kandev: FakeKandev,
    sync,
    notifier: SubscriptionNotifier,
    drain,
    gateway: FakeSlackGateway,
) -> None:
    store.followups.subscribe(ALICE_ID, "all")
    store.followups.subscribe(BOB, "all")
    # Mobile's route has no answerers: the channel's members of the app's own organisation may
    # answer (Slack lookups: the person's organisation, then the channel's members).
    bundle = make_bundle()
    fake_kandev.add(bundle, workspace_id="ws-2", workspace_name="Mobile")
    sync.reconcile_once()
    drain()
    gateway.fail("users.info", "internal_error")
    assert notifier.work_once() == 0
    assert store.cards.messages_of(bundle.pending_id) == []
    assert notifier.work_once() == 2
    drain()
    assert {m.target for m in store.cards.messages_of(bundle.pending_id)} == {ALICE_ID, BOB}
    assert len(dm_posts(gateway)) == 2
