"""Linking a person's own Kandev account (kandev_slack/usecases/answering/linking.py) on a real
SQLite store with a vault, a clock the test moves, and fake Kandev clients that say whose
each token is: a token Kandev takes is linked and audited (never the token); a malformed,
refused or unreachable one, or no secret key, is a kind and nothing is stored; connecting
again replaces; disconnecting deletes; the click parked before connecting is offered within
10 minutes (not after, not for a card resolved since), kept once more for the person's
choice, and taken for good by it."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kandev_slack.config.routing import Routing
from kandev_slack.core.domain import Card
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.admission import (
    Request,
    parked_request,
    unparked_request,
)
from kandev_slack.usecases.answering.linking import (
    PARKED_FOR_S,
    Linked,
    LinkedAs,
    Linking,
    offerable,
)
from kandev_slack.usecases.identity import Identities, NotConnected
from kandev_slack.usecases.views.waiting import WaitingQueue
from tests.kit.factories import ALICE_ID, CHANNEL, MONGO
from tests.kit.fakes import FakeClock, FakeKandev

BOB_ID = "U0BOB00002"


def pat() -> str:
    """A token of Kandev's shape (``kandev_pat_<8 hex>_<43 base64url>``), unique."""
    return f"kandev_pat_{secrets.token_hex(4)}_{secrets.token_urlsafe(32)}"


@dataclass(frozen=True)
class User:
    id: str
    email: str
    display_name: str


ANA = User("u-ana", "ana@example.com", "Ana")


@dataclass(frozen=True)
class Access:
    id: str
    scopes: tuple[str, ...]


class FakeTokens:
    """Kandev's ``GET /api/v1/auth/me`` per token: whose it is, else refused; ``down``:
    Kandev cannot be reached. A person's client makes their other calls on ``kandev`` (the
    one fake Kandev) and sees ``workspaces`` (their role there: may answer)."""

    def __init__(self, kandev: Any = None, workspaces: tuple[str, ...] = ()) -> None:
        self.users: dict[str, User] = {}
        self.down = False
        self.asked: list[str] = []
        self.kandev = kandev
        self.workspaces = workspaces

    def client_for(self, token: str) -> FakeAccountClient:
        return FakeAccountClient(self, token)


@dataclass
class FakeAccountClient:
    tokens: FakeTokens
    token: str

    def account(self) -> Any:
        self.tokens.asked.append(self.token)
        if self.tokens.down:
            return "unreachable"
        return self.tokens.users.get(self.token, "refused")

    def access(self) -> Any:
        return {w: Access(w, ("session.prompt", "workspace.read")) for w in self.tokens.workspaces}

    def close(self) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if self.tokens.kandev is None:
            raise AttributeError(name)
        return getattr(self.tokens.kandev, name)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 12, 1, 10, 0, tzinfo=UTC))


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Any:
    store = Database(
        f"sqlite:///{tmp_path / 'bot.db'}", clock=clock, vault=Vault.from_keys(Vault.new_key())
    )
    yield store
    store.close()


@pytest.fixture
def routing() -> Routing:
    return Routing(default_channel=CHANNEL, default_identity="required")


@pytest.fixture
def tokens() -> FakeTokens:
    return FakeTokens()


@pytest.fixture
def identities(
    fake_kandev: FakeKandev, store: Database, answerers: Answerers, tokens: FakeTokens
) -> Identities:
    return Identities(
        bot=fake_kandev, links=store.links, answerers=answerers, client_for=tokens.client_for
    )


@pytest.fixture
def linking(identities: Identities, queue: WaitingQueue, store: Database) -> Linking:
    return Linking(identities, queue, store.audit_log)


def audited(store: Database, user: str) -> list[tuple[str, str, str]]:
    """(action, result, detail) of ``user``'s audit entries, oldest first."""
    entries = reversed(store.audit_log.audit_entries(limit=100))
    return [(e.action, e.result, e.detail) for e in entries if e.user == user]


def click_on(card: Card, *, option: bool = True, opens: str = "") -> Request:
    question = card.bundle.questions[0]
    return Request(
        user_id=BOB_ID,
        action="answer",
        source="slack:button",
        via="card",
        pending_id=card.pending_id,
        channel=card.channel,
        ts=card.ts,
        option=(question.question_id, question.options[1].option_id) if option else None,
        opens=opens,  # type: ignore[arg-type]
    )


# ---- connecting --------------------------------------------------------------------------


def test_a_token_kandev_takes_is_linked_and_audited_without_it(
    linking: Linking, tokens: FakeTokens, store: Database
) -> None:
    token = pat()
    tokens.users[token] = ANA

    linked = linking.connect(ALICE_ID, f"  {token}\n", source="slack:modal:connect")

    assert linked == Linked(LinkedAs("Ana", "ana@example.com"), replaced=False, parked=None)
    assert linking.state(ALICE_ID) == LinkedAs("Ana", "ana@example.com")
    link = store.links.get(ALICE_ID)
    assert link is not None and link.token == token and link.kandev_user_id == "u-ana"
    assert audited(store, ALICE_ID) == [("connect", "connected", "kandev user u-ana")]
    assert token not in repr(linked) and token not in str(store.audit_log.audit_entries())


@pytest.mark.parametrize(
    ("token", "down", "problem"),
    [
        ("my password", False, "malformed"),
        ("kandev_pat_0badc0de_" + "x" * 42, False, "malformed"),  # one character short
        (None, False, "refused"),  # a well-formed token Kandev does not know
        (None, True, "unreachable"),
    ],
)
def test_a_token_not_taken_is_a_kind_and_nothing_is_stored(
    linking: Linking,
    tokens: FakeTokens,
    store: Database,
    token: str | None,
    down: bool,
    problem: str,
) -> None:
    tokens.down = down
    sent = token if token is not None else pat()

    assert linking.connect(ALICE_ID, sent, source="slack:command") == NotConnected(problem)  # type: ignore[arg-type]

    assert linking.state(ALICE_ID) is None and store.links.counts() == (0, 0)
    assert audited(store, ALICE_ID) == [("connect", problem, "")]
    assert (problem == "malformed") == (tokens.asked == [])  # a malformed one is never sent


def test_without_a_secret_key_nothing_can_be_linked(
    tmp_path: Path, fake_kandev: FakeKandev, answerers: Answerers, queue, tokens: FakeTokens
) -> None:
    with Database(f"sqlite:///{tmp_path / 'keyless.db'}") as keyless:
        identities = Identities(
            bot=fake_kandev,
            links=keyless.links,
            answerers=answerers,
            client_for=tokens.client_for,
        )
        token = pat()
        tokens.users[token] = ANA
        linking = Linking(identities, queue, keyless.audit_log)
        assert linking.connect(ALICE_ID, token, source="s") == NotConnected("no_key")
        assert tokens.asked == [] and keyless.links.counts() == (0, 0)


def test_connecting_again_replaces_and_disconnecting_deletes(
    linking: Linking, tokens: FakeTokens, store: Database
) -> None:
    first, second = pat(), pat()
    tokens.users[first] = ANA
    tokens.users[second] = User("u-ana", "ana@example.com", "Ana B.")
    linking.connect(ALICE_ID, first, source="s")

    again = linking.connect(ALICE_ID, second, source="s")

    assert isinstance(again, Linked) and again.replaced
    link = store.links.get(ALICE_ID)
    assert link is not None and link.token == second and link.display_name == "Ana B."
    assert linking.disconnect(ALICE_ID, source="slack:button").had
    assert linking.state(ALICE_ID) is None and store.links.get(ALICE_ID) is None
    assert not linking.disconnect(ALICE_ID, source="slack:command").had
    results = [result for action, result, _ in audited(store, ALICE_ID) if action == "disconnect"]
    assert results == ["disconnected", "not_linked"]


def test_a_broken_link_reads_as_broken(
    linking: Linking, tokens: FakeTokens, store: Database
) -> None:
    token = pat()
    tokens.users[token] = ANA
    linking.connect(ALICE_ID, token, source="s")
    assert store.links.mark_broken(ALICE_ID, token)

    assert linking.state(ALICE_ID) == LinkedAs("Ana", "ana@example.com", broken=True)


def test_linking_is_in_use_only_where_a_route_uses_peoples_accounts(
    store: Database, fake_kandev: FakeKandev, gateway, queue, tokens: FakeTokens
) -> None:
    for mode, used in (("bot", False), ("linked", True), ("required", True)):
        routing = Routing(default_channel=CHANNEL, default_identity=mode)  # type: ignore[arg-type]
        identities = Identities(
            bot=fake_kandev,
            links=store.links,
            answerers=Answerers(routing, gateway),
            client_for=tokens.client_for,
        )
        assert Linking(identities, queue, store.audit_log).in_use is used


# ---- the click made before connecting ------------------------------------------------------


def test_a_click_parked_within_ten_minutes_is_offered_and_kept_for_the_choice(
    linking: Linking, identities: Identities, tokens: FakeTokens, card: Card, clock: FakeClock
) -> None:
    click = click_on(card)
    identities.park(BOB_ID, card.pending_id, parked_request(click))
    clock.advance(PARKED_FOR_S - 5)
    token = pat()
    tokens.users[token] = ANA

    linked = linking.connect(BOB_ID, token, source="s")

    assert isinstance(linked, Linked) and linked.parked is not None
    assert linked.parked.card.pending_id == card.pending_id
    assert linked.parked.request == click.__class__(
        **{**click.__dict__, "detail": "", "redelivery": False}
    )
    # Kept again for the offer: taken for good by the person's choice, once.
    clock.advance(PARKED_FOR_S - 5)
    assert linking.take_parked(BOB_ID, "another item") is None  # an offer of another: kept
    taken = linking.take_parked(BOB_ID, card.pending_id)
    assert taken is not None and taken.option == click.option and taken.via == "card"
    assert linking.take_parked(BOB_ID, card.pending_id) is None
    assert not linking.discard(BOB_ID, card.pending_id)


def test_a_click_older_than_ten_minutes_is_not_offered(
    linking: Linking, identities: Identities, tokens: FakeTokens, card: Card, clock: FakeClock
) -> None:
    identities.park(BOB_ID, card.pending_id, parked_request(click_on(card)))
    clock.advance(PARKED_FOR_S + 1)
    token = pat()
    tokens.users[token] = ANA

    linked = linking.connect(BOB_ID, token, source="s")

    assert isinstance(linked, Linked) and linked.parked is None
    assert linking.take_parked(BOB_ID, card.pending_id) is None


def test_a_click_on_a_card_resolved_since_is_not_offered(
    linking: Linking,
    identities: Identities,
    tokens: FakeTokens,
    card: Card,
    fake_kandev: FakeKandev,
    sync,
    store: Database,
) -> None:
    identities.park(BOB_ID, card.pending_id, parked_request(click_on(card)))
    fake_kandev.resolve_in_kandev(card.pending_id, [MONGO])  # answered in Kandev meanwhile
    sync.reconcile_once()
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.state.terminal
    token = pat()
    tokens.users[token] = ANA

    linked = linking.connect(BOB_ID, token, source="s")

    assert isinstance(linked, Linked) and linked.parked is None


def test_a_discarded_click_is_gone_and_audited(
    linking: Linking, identities: Identities, tokens: FakeTokens, card: Card, store: Database
) -> None:
    identities.park(
        BOB_ID, card.pending_id, parked_request(click_on(card, option=False, opens="answer"))
    )
    token = pat()
    tokens.users[token] = ANA
    linked = linking.connect(BOB_ID, token, source="s")
    assert isinstance(linked, Linked) and linked.parked is not None
    assert linked.parked.request.opens == "answer" and linked.parked.request.option is None

    assert linking.discard(BOB_ID, card.pending_id)
    assert not linking.discard(BOB_ID, card.pending_id)
    assert linking.take_parked(BOB_ID, card.pending_id) is None
    assert ("discard_parked", "discarded", "") in audited(store, BOB_ID)


def test_disconnecting_drops_the_click_kept_for_the_offer(
    linking: Linking, identities: Identities, tokens: FakeTokens, card: Card
) -> None:
    identities.park(BOB_ID, card.pending_id, parked_request(click_on(card)))
    token = pat()
    tokens.users[token] = ANA
    linking.connect(BOB_ID, token, source="s")

    linking.disconnect(BOB_ID, source="s")

    assert linking.take_parked(BOB_ID, card.pending_id) is None


# ---- a parked click as a request again (kandev_slack/usecases/answering/admission.py) --------


def test_every_click_that_opens_a_form_comes_back_as_it_was(card: Card) -> None:
    for opens in ("", "answer", "other", "reject"):
        click = click_on(card, option=not opens, opens=opens)
        back = unparked_request(BOB_ID, parked_request(click))
        assert back is not None and back.opens == opens and back.option == click.option


@pytest.mark.parametrize(
    "kept",
    [
        {"action": "view", "via": "card", "pending_id": "p"},  # never parked: reads nothing
        {"action": "answer", "via": "elsewhere", "pending_id": "p"},
        {"action": "answer", "via": "card", "pending_id": "p", "opens": "delete"},
        {"action": "answer", "via": "card", "pending_id": ""},
        {"action": "answer", "via": "card", "pending_id": "p", "option": ["q"]},
        {"action": "answer", "via": "card", "pending_id": "p", "option": [1, 2]},
        {"action": "answer", "via": "card", "pending_id": "p", "channel": 5},
    ],
)
def test_a_kept_click_this_release_cannot_read_is_none(kept: dict[str, Any]) -> None:
    assert unparked_request(BOB_ID, kept) is None


@pytest.mark.parametrize(
    ("source", "option", "opens", "action", "offered"),
    [
        ("slack:button", True, "", "answer", True),  # an option
        ("slack:button", False, "answer", "answer", True),  # Answer… (its form)
        ("slack:skip-confirm", False, "", "reject", True),  # Skip
        ("slack:overflow", False, "", "claim", True),  # I'm on it
        ("slack:modal:card", False, "", "answer", False),  # a submitted form: its answers gone
        ("slack:modal:card", True, "", "answer", False),
        ("slack:thread_reply", False, "", "answer", False),  # a thread reply's text
        ("answer_all", True, "", "answer", False),  # Send to all
        ("slack:button", False, "", "answer", False),  # an answer without its content
    ],
)
def test_only_a_click_that_is_its_whole_answer_or_opens_a_form_is_offered(
    linking: Linking,
    identities: Identities,
    tokens: FakeTokens,
    card: Card,
    source: str,
    option: bool,
    opens: str,
    action: str,
    offered: bool,
) -> None:
    click = replace(click_on(card, option=option, opens=opens), source=source, action=action)
    assert offerable(click) is offered
    identities.park(BOB_ID, card.pending_id, parked_request(click))
    token = pat()
    tokens.users[token] = ANA

    linked = linking.connect(BOB_ID, token, source="s")

    assert isinstance(linked, Linked) and (linked.parked is not None) is offered
