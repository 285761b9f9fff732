"""Identities (kandev_slack/usecases/identity.py), the one place a use-case takes the Kandev
client a person acts and sees with: the token's shape, the route's mode, the viewer and
visibility checks on their workspaces (kept a while), a refused token breaking their link, and
the bounded set of open clients. On a real SQLite store (links sealed by a vault) with the
fake Kandev of tests/kit/fakes.py (one Kandev, each token its own view of it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.domain import Action, Card
from kandev_slack.kandev.errors import KandevUnavailable
from kandev_slack.kandev.models import KandevUser, Workspace
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from kandev_slack.usecases import identity
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.identity import (
    ACTS_IN_KANDEV,
    SCOPES_TTL_S,
    Acting,
    Connected,
    Identities,
    NotConnected,
    token_shape_ok,
)
from tests.kit.factories import ALICE_ID, CHANNEL, KANDEV_URL, make_bundle, make_card, make_task
from tests.kit.fakes import FakeKandev, FakeSlackGateway

BOB_ID = "U0BOB00002"
#: Tokens of Kandev's shape (``kandev_pat_<8 hex>_<43 base64url>``).
ANA_TOKEN = "kandev_pat_0123abcd_" + "A" * 43
ANA_NEW = "kandev_pat_0123abce_" + "B" * 43
BEN_TOKEN = "kandev_pat_4567cdef_" + "C-_9" * 10 + "xyz"
ANA = KandevUser(id="u-ana", email="ana@example.com", display_name="Ana")
BEN = KandevUser(id="u-ben", email="ben@example.com", display_name="Ben")
COLLABORATOR = ("session.control", "session.exec", "session.prompt", "task.write", "workspace.read")
VIEWER = ("workspace.read",)
ANSWERING: tuple[Action, ...] = ("answer", "reject", "approve", "claim")
NOT_SENT: tuple[Action, ...] = ("view", "release", "snooze", "unsnooze")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Database]:
    opened = Database(f"sqlite:///{tmp_path / 'bot.db'}", vault=Vault.from_keys(Vault.new_key()))
    yield opened
    opened.close()


@pytest.fixture
def kandev() -> FakeKandev:
    """The bot's Kandev; Ana's token sees ws-1 (collaborator) and ws-bot, ws-req; Ben's ws-1
    as a viewer."""
    bot = FakeKandev(KANDEV_URL)
    seen = [Workspace(id=w, scopes=COLLABORATOR) for w in ("ws-1", "ws-bot", "ws-req")]
    bot.person(ANA_TOKEN, ANA, seen)
    bot.person(BEN_TOKEN, BEN, [Workspace(id="ws-1", scopes=VIEWER)])
    return bot


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def identities(store: Database, kandev: FakeKandev, clock: Clock) -> Identities[FakeKandev]:
    """``[defaults]`` linked; workspace ws-bot: bot; ws-req: required."""
    routing = Routing(
        default_channel=CHANNEL,
        default_identity="linked",
        rules=(
            RouteRule(workspace="ws-bot", channel=None, answerers=frozenset(), line=1),
            RouteRule(
                workspace="ws-req",
                channel=None,
                answerers=frozenset(),
                line=2,
                identity="required",
            ),
        ),
    )
    return Identities(
        bot=kandev,
        links=store.links,
        answerers=Answerers(routing, FakeSlackGateway()),
        client_for=kandev.client_for,
        clock=clock,
    )


def card_in(workspace_id: str) -> Card:
    return make_card(make_bundle(), task=make_task(workspace_id=workspace_id))


def link(store: Database, user: str = ALICE_ID, token: str = ANA_TOKEN, who=ANA) -> None:
    store.links.link(user, who.id, who.display_name, who.email, token)


# ---- the token's shape --------------------------------------------------------------------


def test_a_kandev_personal_access_token_has_its_shape() -> None:
    assert token_shape_ok(ANA_TOKEN) and token_shape_ok(BEN_TOKEN)
    bad = [
        "",
        "kandev_pat_0123abcd_" + "A" * 42,  # one short
        "kandev_pat_0123abcd_" + "A" * 44,  # one long
        "kandev_pat_0123ABCD_" + "A" * 43,  # the display prefix is lowercase hex
        "kandev_pat_0123abcg_" + "A" * 43,  # not hex
        "kandev_pat_0123abc_" + "A" * 44,  # a 7-character prefix
        "kandev_pat_0123abcd-" + "A" * 43,  # no separator
        "kandev_tok_0123abcd_" + "A" * 43,  # not a personal access token
        "kandev_pat_0123abcd_" + "A" * 42 + "=",  # not base64url
        "kandev_pat_0123abcd_" + "A" * 42 + " ",
        "hunter2-my-password",
    ]
    assert [t for t in bad if token_shape_ok(t)] == []


def test_connect_refuses_a_malformed_token_without_asking_kandev(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    assert identities.connect(ALICE_ID, "xoxp-not-a-kandev-token") == NotConnected("malformed")
    assert kandev.made == [] and store.links.get(ALICE_ID) is None


# ---- connecting -----------------------------------------------------------------------------


def test_connect_stores_a_token_kandev_takes_and_replacing_forgets_the_old_client(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    connected = identities.connect(ALICE_ID, f"  {ANA_TOKEN}\n")  # pasted with blanks
    assert connected == Connected(ANA, replaced=False)
    linked = store.links.get(ALICE_ID)
    assert linked is not None and (linked.kandev_user_id, linked.token) == ("u-ana", ANA_TOKEN)
    old = identities.client(linked)

    kandev.person(ANA_NEW, ANA, [Workspace(id="ws-1", scopes=COLLABORATOR)])
    assert identities.connect(ALICE_ID, ANA_NEW) == Connected(ANA, replaced=True)

    assert ("close", {}) in old.calls  # the old token's client is closed
    relinked = store.links.get(ALICE_ID)
    assert relinked is not None and relinked.token == ANA_NEW
    assert identities.whoami(ALICE_ID) == relinked
    assert identities.slack_user_of("u-ana") == ALICE_ID
    assert identities.slack_user_of("") is None and identities.slack_user_of("u-x") is None


def test_connect_stores_nothing_when_kandev_refuses_or_cannot_be_asked(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    unknown = "kandev_pat_deadbeef_" + "D" * 43
    assert identities.connect(ALICE_ID, unknown) == NotConnected("refused")
    kandev.revoke(ANA_TOKEN)
    assert identities.connect(ALICE_ID, ANA_TOKEN) == NotConnected("refused")
    kandev.people[BEN_TOKEN].fail("account", KandevUnavailable("down"))
    assert identities.connect(BOB_ID, BEN_TOKEN) == NotConnected("unreachable")
    assert store.links.get(ALICE_ID) is None and store.links.get(BOB_ID) is None
    # Each trial client was closed.
    assert all(("close", {}) in kandev.people[t].calls for t in (unknown, ANA_TOKEN, BEN_TOKEN))


def test_connect_without_a_secret_key_stores_nothing(
    tmp_path: Path, kandev: FakeKandev, identities: Identities[FakeKandev]
) -> None:
    with Database(f"sqlite:///{tmp_path / 'nokey.db'}") as keyless:
        without = Identities(
            bot=kandev,
            links=keyless.links,
            answerers=identities.answerers,
            client_for=kandev.client_for,
        )
        assert without.connect(ALICE_ID, ANA_TOKEN) == NotConnected("no_key")
    assert kandev.made == []


def test_disconnect_deletes_the_link_and_closes_its_client(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    link(store)
    acting = identities.acting(ALICE_ID, card_in("ws-1"), "answer")
    assert isinstance(acting, Acting)

    assert identities.disconnect(ALICE_ID) is True
    assert identities.disconnect(ALICE_ID) is False
    assert store.links.get(ALICE_ID) is None
    assert ("close", {}) in acting.kandev.calls


# ---- the modes ----------------------------------------------------------------------------


def test_a_bot_route_acts_with_the_bots_client_even_for_a_linked_person(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    link(store)
    for action in (*ANSWERING, *NOT_SENT):
        acting = identities.acting(ALICE_ID, card_in("ws-bot"), action)
        assert acting == Acting(kandev), action
    assert kandev.made == []  # no person's client was even made


def test_a_linked_route_acts_with_the_persons_own_client_else_the_bots(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    link(store)
    for action in (*ANSWERING, *NOT_SENT):
        acting = identities.acting(ALICE_ID, card_in("ws-1"), action)
        assert isinstance(acting, Acting), action
        assert acting.kandev is kandev.people[ANA_TOKEN]
        assert acting.link is not None and acting.kandev_user_id == "u-ana"
        # Someone not linked: the bot's client, and no Kandev user.
        unlinked = identities.acting(BOB_ID, card_in("ws-1"), action)
        assert unlinked == Acting(kandev) and unlinked.kandev_user_id == ""


def test_a_required_route_refuses_an_unlinked_person_only_what_reaches_kandev(
    identities: Identities[FakeKandev], kandev: FakeKandev
) -> None:
    assert set(ANSWERING) == ACTS_IN_KANDEV
    for action in ANSWERING:
        assert identities.acting(BOB_ID, card_in("ws-req"), action) == "connect", action
    for action in NOT_SENT:
        assert identities.acting(BOB_ID, card_in("ws-req"), action) == Acting(kandev), action


def test_a_broken_link_must_reconnect_to_act_and_reads_as_the_bot(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    link(store)
    assert store.links.mark_broken(ALICE_ID, ANA_TOKEN)
    for workspace in ("ws-1", "ws-req"):
        for action in ANSWERING:
            assert identities.acting(ALICE_ID, card_in(workspace), action) == "reconnect"
        for action in NOT_SENT:
            assert identities.acting(ALICE_ID, card_in(workspace), action) == Acting(kandev)
    assert identities.seeing(ALICE_ID) == Acting(kandev)


def test_seeing_uses_their_client_where_routes_use_linked_accounts(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    link(store)
    theirs = kandev.people[ANA_TOKEN]
    assert identities.seeing(ALICE_ID).kandev is theirs  # any route
    assert identities.seeing(ALICE_ID, card_in("ws-1").task).kandev is theirs
    assert identities.seeing(ALICE_ID, card_in("ws-bot").task) == Acting(kandev)
    assert identities.seeing(BOB_ID) == Acting(kandev)
    assert identities.workspaces_of(Acting(kandev)) is None
    seen = identities.workspaces_of(identities.seeing(ALICE_ID))
    assert isinstance(seen, dict) and set(seen) == {"ws-1", "ws-bot", "ws-req"}


# ---- their role, and what their account sees ----------------------------------------------


def test_a_viewer_and_an_account_that_cannot_see_the_workspace_are_refused(
    identities: Identities[FakeKandev], store: Database
) -> None:
    link(store, BOB_ID, BEN_TOKEN, BEN)
    link(store)
    for action in ANSWERING:
        assert identities.acting(BOB_ID, card_in("ws-1"), action) == "viewer"
        assert identities.acting(ALICE_ID, card_in("ws-elsewhere"), action) == "not_visible"
    # Reading and snoozing are not deciding: a viewer reads with his own client.
    reading = identities.acting(BOB_ID, card_in("ws-1"), "view")
    assert isinstance(reading, Acting) and reading.link is not None


def test_a_token_kandev_refuses_breaks_the_link_and_asks_to_reconnect(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    link(store)
    kandev.revoke(ANA_TOKEN)

    assert identities.acting(ALICE_ID, card_in("ws-1"), "answer") == "reconnect"

    linked = store.links.get(ALICE_ID)
    assert linked is not None and linked.broken
    assert ("close", {}) in kandev.people[ANA_TOKEN].calls


def test_kandev_unreachable_while_reading_their_workspaces_is_a_retry(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    link(store)
    theirs = kandev.people[ANA_TOKEN]
    theirs.fail("access", KandevUnavailable("down"), times=1)

    assert identities.acting(ALICE_ID, card_in("ws-1"), "answer") == "unreachable"
    linked = store.links.get(ALICE_ID)
    assert linked is not None and not linked.broken  # not their fault
    assert isinstance(identities.acting(ALICE_ID, card_in("ws-1"), "answer"), Acting)
    assert len(theirs.called("access")) == 2  # a failure is not kept


def test_their_workspaces_are_read_once_a_while(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database, clock: Clock
) -> None:
    link(store)
    theirs = kandev.people[ANA_TOKEN]
    for action in ANSWERING:
        assert isinstance(identities.acting(ALICE_ID, card_in("ws-1"), action), Acting)
    assert len(theirs.called("access")) == 1

    # Taken out of ws-1: the kept roles still say yes until they are read again.
    theirs.workspace_list = [Workspace(id="ws-bot", scopes=COLLABORATOR)]
    clock.now += SCOPES_TTL_S - 1
    assert isinstance(identities.acting(ALICE_ID, card_in("ws-1"), "answer"), Acting)
    clock.now += 1
    assert identities.acting(ALICE_ID, card_in("ws-1"), "answer") == "not_visible"
    assert len(theirs.called("access")) == 2


# ---- refused_token ----------------------------------------------------------------------------


def test_refused_token_marks_only_the_token_that_was_refused(
    identities: Identities[FakeKandev], kandev: FakeKandev, store: Database
) -> None:
    link(store)
    acting = identities.acting(ALICE_ID, card_in("ws-1"), "answer")
    assert isinstance(acting, Acting)
    assert identities.refused_token(Acting(kandev)) is False  # the bot's: no link to break

    # She linked a new token meanwhile: the old one's 401 does not break the new link.
    kandev.person(ANA_NEW, ANA, [Workspace(id="ws-1", scopes=COLLABORATOR)])
    link(store, token=ANA_NEW)
    assert identities.refused_token(acting) is False
    relinked = store.links.get(ALICE_ID)
    assert relinked is not None and not relinked.broken

    current = identities.acting(ALICE_ID, card_in("ws-1"), "answer")
    assert isinstance(current, Acting) and current.kandev is kandev.people[ANA_NEW]
    assert identities.refused_token(current) is True
    broken = store.links.get(ALICE_ID)
    assert broken is not None and broken.broken
    # What was kept for it is forgotten: a new client and a new read after relinking.
    link(store, token=ANA_NEW)
    again = identities.acting(ALICE_ID, card_in("ws-1"), "answer")
    assert isinstance(again, Acting)
    assert kandev.made.count(ANA_NEW) == 2
    assert len(kandev.people[ANA_NEW].called("access")) == 2


# ---- the open clients ---------------------------------------------------------------------------


def test_at_most_max_clients_stay_open_the_least_recently_used_closed_first(
    identities: Identities[FakeKandev],
    kandev: FakeKandev,
    store: Database,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(identity, "MAX_CLIENTS", 2)
    people = {f"U0P{n:07d}": f"kandev_pat_0000000{n}_" + str(n) * 43 for n in range(3)}
    for n, (user, token) in enumerate(people.items()):
        who = KandevUser(id=f"u-{n}", email=f"p{n}@example.com", display_name=f"P{n}")
        kandev.person(token, who, [Workspace(id="ws-1", scopes=COLLABORATOR)])
        store.links.link(user, who.id, who.display_name, who.email, token)
    first, second, third = people
    client = {user: kandev.people[token] for user, token in people.items()}

    def act(user: str) -> None:
        assert isinstance(identities.acting(user, card_in("ws-1"), "view"), Acting)

    act(first)
    act(second)
    act(first)  # used again: now the most recent
    act(third)  # one too many: the least recently used (second) is closed

    assert ("close", {}) in client[second].calls
    assert ("close", {}) not in client[first].calls
    assert ("close", {}) not in client[third].calls
    act(second)  # made anew; now first is the least recently used
    assert ("close", {}) in client[first].calls
    assert [kandev.made.count(people[u]) for u in (first, second, third)] == [1, 2, 1]


# ---- a parked click ---------------------------------------------------------------------------


def test_a_parked_click_is_taken_once(identities: Identities[FakeKandev]) -> None:
    identities.park(BOB_ID, "p-1", {"action": "answer", "option": ["q1", "q1_opt1"]})
    assert identities.take_parked(BOB_ID) == (
        "p-1",
        {"action": "answer", "option": ["q1", "q1_opt1"]},
    )
    assert identities.take_parked(BOB_ID) is None
