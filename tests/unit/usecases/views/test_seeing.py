"""Seeing as them (issue 32, kandev_slack/usecases/views/seeing.py): in routes that use
people's own Kandev accounts, a linked person's App Home, listing and DM cards show only the
workspaces their token sees and leave out what they hid in Kandev's Needs-you inbox; routes
with ``identity = "bot"`` and people not linked are unchanged; a refused token breaks the link
(then they see as unlinked); unreadable workspaces show nothing of those routes; the work is
bounded (one read of a person's workspaces and one per workspace of their inbox, cached)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.signals import Signal
from kandev_slack.kandev.errors import KandevAuthError, KandevUnavailable
from kandev_slack.kandev.models import Workspace
from kandev_slack.kits.fakeslack import blocks_text
from kandev_slack.ops.health import Health
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.followups.subscriptions import SubscriptionNotifier
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.intake.sync import SyncEngine
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.tasks import TaskDirectory
from kandev_slack.usecases.views.home import HomeService
from kandev_slack.usecases.views.listing import ListingService
from kandev_slack.usecases.views.seeing import Seeing, Sight
from kandev_slack.usecases.views.waiting import Permalinks, SharedReads, WaitingQueue
from tests.kit.factories import CHANNEL, KANDEV_URL, make_task, numbered_bundle
from tests.kit.fakes import FakeKandev, FakeMonotonic, FakeSlackGateway

ANA, CAT, BOB = "U0ANA00001", "U0CAT00003", "U0BOB00002"
ANA_TOKEN = "kandev_pat_0a1b2c3d_" + "A" * 43
CAT_TOKEN = "kandev_pat_0c0c0c0c_" + "C" * 43

#: Platform (ws-1): Ana's account is a member; Private (ws-2): nobody's but the bot's; Open
#: (ws-3): a ``bot`` route, so everyone who may answer sees it.
PLATFORM, PRIVATE, OPEN = "ws-1", "ws-2", "ws-3"


@pytest.fixture
def routing() -> Routing:
    """Everything goes to the channel; Ana, Cat and Bob may answer; Kandev accounts are used
    ("linked") but in Open, a ``bot`` route."""
    people = frozenset({ANA, CAT, BOB})
    open_route = RouteRule(workspace="Open", channel=None, answerers=people, line=1, identity="bot")
    return Routing(
        default_channel=CHANNEL,
        default_answerers=people,
        default_identity="linked",
        rules=(open_route,),
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Database]:
    """A store that keeps tokens (a secret key)."""
    store = Database(f"sqlite:///{tmp_path / 'bot.db'}", vault=Vault.from_keys(Vault.new_key()))
    yield store
    store.close()


@pytest.fixture
def people() -> dict[str, FakeKandev]:
    """Each person's own Kandev client, by token: Ana's sees Platform and Open; Cat's nothing."""
    ana, cat = FakeKandev(KANDEV_URL), FakeKandev(KANDEV_URL)
    ana.workspace_list = [Workspace(id=PLATFORM, name="Platform"), Workspace(id=OPEN, name="Open")]
    return {ANA_TOKEN: ana, CAT_TOKEN: cat}


@pytest.fixture
def ticks() -> FakeMonotonic:
    return FakeMonotonic()


@pytest.fixture
def identities(
    fake_kandev: FakeKandev,
    store: Database,
    answerers: Answerers,
    people: dict[str, FakeKandev],
    ticks: FakeMonotonic,
) -> Identities:
    return Identities(
        bot=fake_kandev,
        links=store.links,
        answerers=answerers,
        client_for=lambda token: people[token],
        clock=ticks.monotonic,
    )


@pytest.fixture
def seeing(identities: Identities, ticks: FakeMonotonic) -> Seeing:
    return Seeing(identities, clock=ticks.monotonic)


@pytest.fixture
def queue(
    fake_kandev: FakeKandev,
    store: Database,
    routing: Routing,
    tasks: TaskDirectory,
    gateway: FakeSlackGateway,
    answerers: Answerers,
    seeing: Seeing,
) -> WaitingQueue:
    permalinks = Permalinks(gateway)
    return WaitingQueue(
        fake_kandev,
        store.cards,
        routing,
        tasks,
        permalinks,
        answerers,
        SharedReads(),
        seeing=seeing,
    )


@pytest.fixture
def home(queue: WaitingQueue, store: Database, gateway: FakeSlackGateway) -> HomeService:
    changes = Signal("card changed")
    viewers = store.viewers
    return HomeService(
        queue, store.cards, store.followups, viewers, gateway, changes, kandev_url=KANDEV_URL
    )


@pytest.fixture
def linked(store: Database) -> None:
    """Ana and Cat linked their Kandev accounts; Bob did not."""
    store.links.link(ANA, "u-ana", "Ana", "ana@example.com", ANA_TOKEN)
    store.links.link(CAT, "u-cat", "Cat", "cat@example.com", CAT_TOKEN)


@pytest.fixture
def waiting(fake_kandev: FakeKandev) -> None:
    """One question in each workspace: "Platform task", "Private task", "Open task"."""
    fake_kandev.add(numbered_bundle(1), title="Platform task", workspace_id=PLATFORM)
    fake_kandev.add(
        numbered_bundle(2), title="Private task", workspace_id=PRIVATE, workspace_name="Private"
    )
    fake_kandev.add(numbered_bundle(3), title="Open task", workspace_id=OPEN, workspace_name="Open")


def home_of(home: HomeService, user: str) -> str:
    return blocks_text(home.build(user)["blocks"])


def listing_of(queue: WaitingQueue, fake_kandev: FakeKandev, user: str, text: str = "") -> str:
    listing = ListingService(queue, fake_kandev, kandev_url=KANDEV_URL)
    reply = listing.reply(text, user)
    return reply.text + blocks_text(reply.blocks)


def shows(text: str) -> set[str]:
    return {t for t in ("Platform task", "Private task", "Open task") if t in text}


# ---- the pure part ------------------------------------------------------------------------


def test_a_sight_limits_only_the_routes_that_use_the_persons_account() -> None:
    linked_route = make_task("t1", workspace_id=PLATFORM)
    private = make_task("t2", workspace_id=PRIVATE)
    bot_route = make_task("t3", workspace_id=OPEN)
    modes = {"t1": "linked", "t2": "required", "t3": "bot"}
    sight = Sight(ANA, frozenset({PLATFORM}), modes=lambda task: modes[task.task_id])  # type: ignore[arg-type,return-value]

    assert sight.limited and sight.sees(linked_route) and sight.sees(bot_route)
    assert not sight.sees(private)
    assert sight.sees_workspace(PLATFORM) and not sight.sees_workspace(OPEN)
    unlimited = Sight(ANA)
    assert not unlimited.limited and unlimited.sees(private) and unlimited.sees_workspace(PRIVATE)


# ---- App Home and the listing -----------------------------------------------------------


@pytest.mark.usefixtures("linked", "waiting")
def test_a_linked_person_sees_only_the_workspaces_their_account_sees(
    home: HomeService, queue: WaitingQueue, fake_kandev: FakeKandev
) -> None:
    # Ana's account sees Platform; Cat's sees nothing; Bob is not linked (the bot's view);
    # Open is a bot route: shown to all three.
    assert shows(home_of(home, ANA)) == {"Platform task", "Open task"}
    assert shows(home_of(home, CAT)) == {"Open task"}
    assert shows(home_of(home, BOB)) == {"Platform task", "Private task", "Open task"}
    assert shows(listing_of(queue, fake_kandev, ANA)) == {"Platform task", "Open task"}
    assert shows(listing_of(queue, fake_kandev, CAT)) == {"Open task"}
    assert shows(listing_of(queue, fake_kandev, BOB)) == {
        "Platform task",
        "Private task",
        "Open task",
    }
    # A workspace their account cannot see is not named to them, nor listed by its name.
    assert "Private" not in listing_of(queue, fake_kandev, ANA, "help me")
    assert shows(listing_of(queue, fake_kandev, ANA, "Private")) == set()


@pytest.mark.usefixtures("linked", "waiting")
def test_their_workspaces_are_read_once_per_minute_not_once_per_item(
    home: HomeService, people: dict[str, FakeKandev], ticks: FakeMonotonic, fake_kandev: FakeKandev
) -> None:
    for n in range(4, 24):  # many more items in Platform
        fake_kandev.add(numbered_bundle(n), title=f"More {n}", workspace_id=PLATFORM)
    ana = people[ANA_TOKEN]
    home_of(home, ANA)
    home_of(home, ANA)
    assert len(ana.called("access")) == 1
    assert len(ana.called("hidden_in_inbox")) == 1  # Platform: the only one waiting for her
    ticks.advance(61)
    home_of(home, ANA)
    assert len(ana.called("access")) == 2


@pytest.mark.usefixtures("linked", "waiting")
def test_what_they_hid_in_kandevs_inbox_is_left_out_for_them_only(
    home: HomeService,
    queue: WaitingQueue,
    fake_kandev: FakeKandev,
    people: dict[str, FakeKandev],
    seeing: Seeing,
    identities: Identities,
    store: Database,
    ticks: FakeMonotonic,
) -> None:
    ana = people[ANA_TOKEN]
    ana.inbox["pending-001"] = "4h"  # snoozed in Kandev's web inbox
    ana.inbox["pending-003"] = "dismissed"  # in a bot route: not hers to hide here

    assert shows(home_of(home, ANA)) == {"Open task"}
    assert shows(listing_of(queue, fake_kandev, ANA)) == {"Open task"}
    assert "Platform task" in home_of(home, BOB)
    # Read once per workspace (Open is a bot route: never read), kept briefly.
    assert ana.called("hidden_in_inbox") == [{"workspace_id": PLATFORM}]

    del ana.inbox["pending-001"]  # restored in Kandev: shown once the kept read is old
    assert shows(home_of(home, ANA)) == {"Open task"}
    ticks.advance(16)
    assert shows(home_of(home, ANA)) == {"Platform task", "Open task"}

    # A change made from Slack drops what is kept at once.
    ana.inbox["pending-001"] = "1h"
    seeing.forget(identities.seeing(ANA))
    assert shows(home_of(home, ANA)) == {"Open task"}


@pytest.mark.usefixtures("linked", "waiting")
def test_an_inbox_that_cannot_be_read_hides_nothing(
    home: HomeService, people: dict[str, FakeKandev]
) -> None:
    ana = people[ANA_TOKEN]
    ana.inbox["pending-001"] = "4h"
    ana.fail("hidden_in_inbox", KandevUnavailable("the inbox is off"))
    assert shows(home_of(home, ANA)) == {"Platform task", "Open task"}


@pytest.mark.usefixtures("linked", "waiting")
def test_a_refused_token_breaks_the_link_and_they_see_as_unlinked(
    home: HomeService, people: dict[str, FakeKandev], store: Database
) -> None:
    people[ANA_TOKEN].fail("access", KandevAuthError())
    assert shows(home_of(home, ANA)) == {"Platform task", "Private task", "Open task"}
    link = store.links.get(ANA)
    assert link is not None and link.broken
    people[ANA_TOKEN].recover()
    # Broken: the bot's view, her token never used again until she connects anew.
    assert shows(home_of(home, ANA)) == {"Platform task", "Private task", "Open task"}
    assert len(people[ANA_TOKEN].called("access")) == 1


@pytest.mark.usefixtures("linked", "waiting")
def test_a_token_refused_by_the_inbox_breaks_the_link_too(
    home: HomeService, people: dict[str, FakeKandev], store: Database
) -> None:
    people[ANA_TOKEN].fail("hidden_in_inbox", KandevAuthError())
    home_of(home, ANA)
    link = store.links.get(ANA)
    assert link is not None and link.broken


@pytest.mark.usefixtures("linked", "waiting")
def test_unreadable_workspaces_show_nothing_of_the_routes_that_use_their_account(
    home: HomeService,
    queue: WaitingQueue,
    people: dict[str, FakeKandev],
    store: Database,
    ticks: FakeMonotonic,
) -> None:
    ana = people[ANA_TOKEN]
    ana.fail("access", KandevUnavailable("Kandev is down"))
    assert shows(home_of(home, ANA)) == {"Open task"}  # private stays private
    assert queue.sight_of(ANA).unsure
    link = store.links.get(ANA)
    assert link is not None and not link.broken
    # Not asked again at every view while Kandev is down; asked again a moment later.
    assert len(ana.called("access")) == 1
    ana.recover()
    ticks.advance(11)
    assert shows(home_of(home, ANA)) == {"Platform task", "Open task"}
    assert len(ana.called("access")) == 2


@pytest.mark.usefixtures("waiting")
def test_without_linked_routes_nobody_is_looked_up(
    fake_kandev: FakeKandev,
    store: Database,
    tasks: TaskDirectory,
    gateway: FakeSlackGateway,
    people: dict[str, FakeKandev],
) -> None:
    """``bot`` everywhere: today's views, no link read, no person's Kandev call."""
    store.links.link(ANA, "u-ana", "Ana", "ana@example.com", ANA_TOKEN)
    routing = Routing(default_channel=CHANNEL, default_answerers=frozenset({ANA}))
    answerers = Answerers(routing, gateway)
    identities = Identities(
        bot=fake_kandev, links=store.links, answerers=answerers, client_for=people.__getitem__
    )
    queue = WaitingQueue(
        fake_kandev,
        store.cards,
        routing,
        tasks,
        Permalinks(gateway),
        answerers,
        SharedReads(),
        seeing=Seeing(identities),
    )
    assert not queue.sight_of(ANA).limited
    assert shows(listing_of(queue, fake_kandev, ANA)) == {
        "Platform task",
        "Private task",
        "Open task",
    }
    assert people[ANA_TOKEN].calls == []


# ---- DM cards ------------------------------------------------------------------------------


@pytest.fixture
def notifier(
    store: Database, answerers: Answerers, publisher: Publisher, seeing: Seeing
) -> SubscriptionNotifier:
    return SubscriptionNotifier(store.followups, answerers, publisher, Health(), seeing=seeing)


def dm_targets(store: Database, pending_id: str) -> set[str]:
    return {m.target for m in store.cards.messages_of(pending_id) if m.kind == "dm"}


@pytest.fixture
def post_all(sync: SyncEngine, publisher: Publisher, drain) -> Callable[[], None]:
    """``post_all()``: every bundle Kandev lists gets its card posted."""

    def post() -> None:
        sync.reconcile_once()
        drain()

    return post


@pytest.mark.usefixtures("linked", "waiting")
def test_dm_cards_only_of_what_their_account_sees_and_did_not_hide(
    notifier: SubscriptionNotifier,
    post_all: Callable[[], None],
    store: Database,
    fake_kandev: FakeKandev,
    people: dict[str, FakeKandev],
) -> None:
    for user in (ANA, CAT, BOB):
        store.followups.subscribe(user, "all", "")
    fake_kandev.add(numbered_bundle(4), title="Hidden task", workspace_id=PLATFORM)
    people[ANA_TOKEN].inbox["pending-004"] = "dismissed"  # in her Kandev inbox
    post_all()

    notifier.work_once()

    assert dm_targets(store, "pending-001") == {ANA, BOB}  # Platform
    assert dm_targets(store, "pending-004") == {BOB}  # Platform, dismissed by Ana in Kandev
    assert dm_targets(store, "pending-002") == {BOB}  # Private: Bob is not linked
    assert dm_targets(store, "pending-003") == {ANA, CAT, BOB}  # Open: a bot route


@pytest.mark.usefixtures("linked")
def test_a_dm_card_waits_while_their_account_cannot_be_read(
    notifier: SubscriptionNotifier,
    post_all: Callable[[], None],
    store: Database,
    fake_kandev: FakeKandev,
    people: dict[str, FakeKandev],
    ticks: FakeMonotonic,
) -> None:
    store.followups.subscribe(ANA, "all", "")
    people[ANA_TOKEN].fail("access", KandevUnavailable("Kandev is down"))
    fake_kandev.add(numbered_bundle(1), title="Platform task", workspace_id=PLATFORM)
    post_all()
    assert notifier.work_once() == 0
    assert dm_targets(store, "pending-001") == set()
    people[ANA_TOKEN].recover()
    ticks.advance(11)  # asked again a moment later
    assert notifier.work_once() == 1
    assert dm_targets(store, "pending-001") == {ANA}
