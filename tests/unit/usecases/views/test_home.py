"""HomeService: each person's App Home, notices, and refresh rounds that respect rate limits."""

from __future__ import annotations

import pytest

from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.domain import CardState
from kandev_slack.core.signals import Signal
from kandev_slack.kits.fakeslack import blocks_text
from kandev_slack.slack_api.gateway import SlackError
from kandev_slack.store import Database
from kandev_slack.usecases.views import home as home_module
from kandev_slack.usecases.views.home import NOTICE_S, HomeService
from kandev_slack.usecases.views.waiting import WaitingQueue
from tests.kit.factories import ALICE_ID, CHANNEL, KANDEV_URL, make_outcome, numbered_bundle
from tests.kit.fakes import FakeKandev, FakeMonotonic, FakeSlackGateway

BOB_ID = "U0BOB00002"


@pytest.fixture
def routing() -> Routing:
    """Platform's questions are Alice's, Data's are Bob's."""
    rules = (
        RouteRule(workspace="Platform", channel=None, answerers=frozenset({ALICE_ID}), line=1),
        RouteRule(workspace="Data", channel="C0DATA", answerers=frozenset({BOB_ID}), line=2),
    )
    return Routing(default_channel=CHANNEL, rules=rules)


@pytest.fixture
def home(queue: WaitingQueue, store: Database, gateway: FakeSlackGateway) -> HomeService:
    return HomeService(
        queue,
        store.cards,
        store.followups,
        store.viewers,
        gateway,
        Signal("card changed"),
        kandev_url=KANDEV_URL,
    )


def add_waiting(fake_kandev: FakeKandev) -> None:
    """A Platform bundle ("Platform task", Alice's) and a Data one ("Data task", Bob's)."""
    fake_kandev.add(numbered_bundle(1), title="Platform task", workspace_name="Platform")
    fake_kandev.add(
        numbered_bundle(2), title="Data task", workspace_id="ws-2", workspace_name="Data"
    )


def shown(view: dict) -> str:
    return blocks_text(view["blocks"])


def published(gateway: FakeSlackGateway) -> dict[str, str]:
    """The text of the last Home published for each person."""
    return {call["user_id"]: shown(call["view"]) for call in gateway.called("views.publish")}


def test_each_persons_home_shows_only_what_they_may_answer(
    home: HomeService, posted, store: Database, fake_kandev: FakeKandev
) -> None:
    resolved = posted(numbered_bundle(3))
    assert store.cards.transition(resolved.pending_id, make_outcome(CardState.ENDED))
    add_waiting(fake_kandev)

    alice = shown(home.build(ALICE_ID))
    bob = shown(home.build(BOB_ID))

    assert "Platform task" in alice and "Data task" not in alice
    assert "Data task" in bob and "Platform task" not in bob
    recent = alice.split("Recently resolved", 1)[1]
    assert "Pick a datastore" in recent and "⏹ Ended — nobody answered" in recent
    assert "Nothing resolved yet" in bob  # Platform's resolved card is not Bob's to see


def test_opening_the_tab_remembers_the_viewer_and_publishes_their_home(
    home: HomeService, gateway: FakeSlackGateway, fake_kandev: FakeKandev
) -> None:
    add_waiting(fake_kandev)
    home.opened(ALICE_ID)

    assert "Platform task" in published(gateway)[ALICE_ID]
    assert home.recent_viewers() == [ALICE_ID]


def test_without_kandev_the_home_shows_the_bots_own_cards_as_stale(
    home: HomeService, posted, fake_kandev: FakeKandev
) -> None:
    posted(numbered_bundle(5))
    add_waiting(fake_kandev)
    fake_kandev.fail("list_listed")

    alice = shown(home.build(ALICE_ID))

    assert "Kandev cannot be reached right now" in alice
    assert "Pick a datastore" in alice  # bundle 5's card, as the bot last knew it
    assert "Platform task" not in alice  # bundle 1 was never posted


def test_a_notice_is_shown_to_its_person_until_it_expires(
    home: HomeService, gateway: FakeSlackGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeMonotonic()
    monkeypatch.setattr(home_module, "time", clock)

    assert home.notice(ALICE_ID, "Your answer was not sent.")

    assert published(gateway)[ALICE_ID].startswith("Your answer was not sent.")
    assert "Your answer was not sent." not in shown(home.build(BOB_ID))
    clock.advance(NOTICE_S / 2)
    assert "Your answer was not sent." in shown(home.build(ALICE_ID))
    clock.advance(NOTICE_S / 2 + 1)
    assert "Your answer was not sent." not in shown(home.build(ALICE_ID))


def test_a_notice_that_cannot_be_published_says_so(
    home: HomeService, gateway: FakeSlackGateway
) -> None:
    gateway.fail("views.publish", "not_enabled")

    assert not home.notice(ALICE_ID, "Your answer was not sent.")


def test_a_rate_limit_stops_the_round_and_a_refused_person_does_not(
    home: HomeService, gateway: FakeSlackGateway, store: Database
) -> None:
    for user in (ALICE_ID, BOB_ID, "U0CAROL003"):
        store.viewers.home_opened(user)
    gateway.fail("views.publish", "user_not_found")  # the first person: skipped, round goes on

    assert home.refresh() == 2
    assert len(gateway.called("views.publish")) == 3

    gateway.fail("views.publish", "ratelimited", retry_after=7.0)
    with pytest.raises(SlackError) as raised:
        home.refresh()
    assert raised.value.retry_after == 7.0
    assert len(gateway.called("views.publish")) == 4  # nobody after the rate limit


def test_a_round_without_viewers_asks_nothing(
    home: HomeService, gateway: FakeSlackGateway, fake_kandev: FakeKandev
) -> None:
    assert home.refresh() == 0
    assert gateway.calls == [] and fake_kandev.calls == []


def test_home_lists_in_the_listings_order_critical_first_then_oldest(
    home: HomeService, fake_kandev: FakeKandev
) -> None:
    fake_kandev.add(numbered_bundle(1), title="Oldest medium task")
    fake_kandev.add(numbered_bundle(2), title="Newer critical task", priority="critical")
    fake_kandev.add(numbered_bundle(3), title="Newest medium task")

    text = shown(home.build(ALICE_ID))

    order = [text.index(t) for t in ("Newer critical", "Oldest medium", "Newest medium")]
    assert order == sorted(order)
