"""kandev_slack/slack/listeners/accounts.py and the account subcommands of commands.py on a
real Bolt App, in a route that requires people's own Kandev accounts: Connect opens the
modal (on top of a modal it is clicked in); the submission is answered in its ack (a field
error, "Connected") or, Kandev being slow, "Checking…" then by views.update; whoami,
disconnect and help; an unlinked person's click is refused with a Connect button and, once
they connected, offered (Send it / Discard) and sent through the one pipeline."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from slack_bolt import App

from kandev_slack.cards import ids, words
from kandev_slack.config.routing import Routing
from kandev_slack.core.domain import CardState
from kandev_slack.kits.fakeslack import BOB, FakeSlack, blocks_text
from kandev_slack.ops.vault import Vault
from kandev_slack.slack.app import build_bolt_app
from kandev_slack.slack.listeners import commands
from kandev_slack.slack.presenters import accounts as accounts_presenter
from kandev_slack.slack.presenters.accounts import Accounts
from kandev_slack.slack.services import Services
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database
from kandev_slack.surfaces.connect import account_blocks
from kandev_slack.usecases.answering.linking import Linking
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.views.listing import ListingService
from tests.kit.factories import ALICE_ID, CHANNEL, KANDEV_URL, WORKSPACE_ID, make_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway
from tests.unit.slack.slack_bodies import (
    TRIGGER_ID,
    card_click,
    command,
    dispatch,
    eventually,
    home_click,
    listing_click,
    submission,
)
from tests.unit.usecases.answering.test_linking import ANA, FakeTokens, pat


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Database]:
    """The bot's database, with a secret key: tokens can be kept."""
    vault = Vault.from_keys(Vault.new_key())
    with Database(f"sqlite:///{tmp_path / 'bot.db'}", vault=vault) as database:
        yield database


@pytest.fixture
def routing() -> Routing:
    return Routing(default_channel=CHANNEL, default_identity="required")


@pytest.fixture
def tokens(fake_kandev: FakeKandev) -> FakeTokens:
    return FakeTokens(fake_kandev, workspaces=(WORKSPACE_ID,))


@pytest.fixture
def identities(fake_kandev: FakeKandev, store: Database, answerers, tokens: FakeTokens):
    return Identities(
        bot=fake_kandev, links=store.links, answerers=answerers, client_for=tokens.client_for
    )


@pytest.fixture
def accounts(services: Services, identities: Identities, queue, store: Database) -> Accounts:
    linking = Linking(identities, queue, store.audit_log)
    return Accounts(
        linking,
        services.notifier,
        services.teller,
        services.home,
        services.interactions,
        services.reading,
        KANDEV_URL,
    )


def bolt_of(fake_slack: FakeSlack, services: Services, accounts: Accounts, queue) -> App:
    listing = ListingService(queue, services.listing.kandev, kandev_url=KANDEV_URL, accounts=True)
    wired = replace(services, accounts=accounts, listing=listing)
    web = make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url)
    return build_bolt_app(web, wired, signing_secret=None, socket_mode=True)


@pytest.fixture
def app(fake_slack: FakeSlack, services: Services, accounts: Accounts, queue) -> App:
    return bolt_of(fake_slack, services, accounts, queue)


HOME = {"type": "home", "blocks": account_blocks(None)}


def opened_modal(gateway: FakeSlackGateway, method: str = "views.open") -> dict[str, Any]:
    """The connect modal last opened (the listener acks first, then opens it)."""

    def opened() -> list[dict[str, Any]]:
        return [
            c for c in gateway.called(method) if c["view"]["callback_id"] == ids.CALLBACK_CONNECT
        ]

    return eventually(opened)[-1]["view"]


def submit(app: App, view: dict[str, Any], token: str, user=None) -> Any:
    values = {ids.BLOCK_TOKEN: {ids.ACTION_TOKEN: token}}
    body = submission(view, values) if user is None else submission(view, values, user=user)
    return dispatch(app, body)


# ---- connecting ----------------------------------------------------------------------------


def test_connect_on_home_opens_the_modal_and_a_good_token_connects(
    app: App, gateway: FakeSlackGateway, tokens: FakeTokens, store: Database
) -> None:
    assert dispatch(app, home_click(HOME, action_id=ids.ACTION_CONNECT)) == (200, "")
    view = opened_modal(gateway)
    assert gateway.called("views.open")[-1]["trigger_id"] == TRIGGER_ID
    token = pat()
    tokens.users[token] = ANA

    status, acked = submit(app, view, token)

    assert status == 200 and acked["response_action"] == "update"
    assert "Connected to Kandev as *Ana* (ana@example.com)" in blocks_text(acked["view"]["blocks"])
    link = store.links.get(ALICE_ID)
    assert link is not None and link.token == token
    eventually(lambda: [c for c in gateway.called("views.publish") if c["user_id"] == ALICE_ID])


def test_a_bad_token_is_a_field_error_and_nothing_is_stored(
    app: App, gateway: FakeSlackGateway, tokens: FakeTokens, store: Database
) -> None:
    dispatch(app, command("connect"))
    view = opened_modal(gateway)

    _, malformed = submit(app, view, "hunter2")
    _, refused = submit(app, view, pat())
    tokens.down = True
    _, unreachable = submit(app, view, pat())

    for acked, said in (
        (malformed, "not a Kandev personal access token"),
        (refused, "does not accept this token"),
        (unreachable, "could not reach Kandev"),
    ):
        assert acked["response_action"] == "errors"
        assert said in acked["errors"][ids.BLOCK_TOKEN]
    assert store.links.counts() == (0, 0)
    assert gateway.called("views.publish") == []


def test_a_slow_kandev_shows_checking_then_the_answer_by_views_update(
    app: App, gateway: FakeSlackGateway, tokens: FakeTokens, store: Database, monkeypatch
) -> None:
    dispatch(app, home_click(HOME, action_id=ids.ACTION_CONNECT))
    view = opened_modal(gateway)
    kandev_answers = threading.Event()
    account = type(tokens.client_for("")).account

    def slow(client):
        kandev_answers.wait(10)
        return account(client)

    monkeypatch.setattr(type(tokens.client_for("")), "account", slow)
    monkeypatch.setattr(accounts_presenter.Accounts, "budget_s", 0.05)
    replies: list[Any] = []
    refused = threading.Thread(target=lambda: replies.append(submit(app, view, pat())))
    refused.start()
    acked = eventually(lambda: replies and replies[0][1])
    assert acked["response_action"] == "update"
    assert words.checking_token_message() in blocks_text(acked["view"]["blocks"])
    kandev_answers.set()
    refused.join(10)
    again = eventually(lambda: gateway.called("views.update"))[-1]["view"]
    assert again["callback_id"] == ids.CALLBACK_CONNECT
    assert "does not accept this token" in blocks_text(again["blocks"])
    assert store.links.counts() == (0, 0)


def test_connect_in_a_modal_goes_on_top_of_it(app: App, gateway: FakeSlackGateway) -> None:
    from kandev_slack.kits.fakeslack import ALICE, find_element, payloads
    from tests.unit.slack.slack_bodies import VIEW_ID, WS

    blocks = account_blocks(None)
    body = payloads.block_actions(
        WS,
        ALICE,
        container={"type": "view", "view_id": VIEW_ID},
        actions=[payloads.action_item(find_element(blocks, action_id=ids.ACTION_CONNECT))],
        trigger_id=TRIGGER_ID,
        response_url=None,
        view={"type": "modal", "id": VIEW_ID, "blocks": blocks},
    )
    dispatch(app, body)
    assert opened_modal(gateway, "views.push")["callback_id"] == ids.CALLBACK_CONNECT


# ---- whoami, disconnect, help -----------------------------------------------------------------


def test_whoami_disconnect_and_help(
    app: App, gateway: FakeSlackGateway, tokens: FakeTokens, store: Database
) -> None:
    _, told = dispatch(app, command("whoami"))
    assert "not connected to a Kandev account" in told["text"]
    dispatch(app, command("connect"))
    token = pat()
    tokens.users[token] = ANA
    submit(app, opened_modal(gateway), token)

    _, told = dispatch(app, command("whoami"))
    assert "Connected to Kandev as *Ana* (ana@example.com)" in told["text"]
    assert ids.ACTION_DISCONNECT in str(told["blocks"])
    _, help_text = dispatch(app, command("help"))
    assert "`/kandev-questions connect`" in blocks_text(help_text["blocks"])
    _, gone = dispatch(app, command("disconnect"))
    assert "Disconnected" in gone["text"] and store.links.get(ALICE_ID) is None
    _, again = dispatch(app, command("disconnect"))
    assert "nothing to disconnect" in again["text"]


def test_disconnect_on_the_whoami_answer_replaces_it(
    app: App, gateway: FakeSlackGateway, tokens: FakeTokens, store: Database
) -> None:
    token = pat()
    tokens.users[token] = ANA
    dispatch(app, command("connect"))
    submit(app, opened_modal(gateway), token)
    _, told = dispatch(app, command("whoami"))

    dispatch(app, listing_click(told["blocks"], CHANNEL, action_id=ids.ACTION_DISCONNECT))

    replaced = eventually(
        lambda: [c for c in gateway.called("response_url") if c.get("replace_original")]
    )
    assert "Disconnected" in replaced[-1]["text"]
    assert store.links.get(ALICE_ID) is None


def test_in_bot_routes_the_words_are_listing_filters(
    fake_slack: FakeSlack,
    services: Services,
    store: Database,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    queue,
    tokens: FakeTokens,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kandev_slack.usecases.answerers import Answerers

    # The listing comes in the ack however loaded the machine is (else it follows after the
    # ack): the budget is read when the listeners are registered, so before bolt_of.
    monkeypatch.setattr(commands, "LIST_BUDGET_S", 30.0)
    bot_routes = Routing(default_channel=CHANNEL)
    identities = Identities(
        bot=fake_kandev,
        links=store.links,
        answerers=Answerers(bot_routes, gateway),
        client_for=tokens.client_for,
    )
    linking = Linking(identities, queue, store.audit_log)
    unused = Accounts(
        linking,
        services.notifier,
        services.teller,
        services.home,
        services.interactions,
        services.reading,
        KANDEV_URL,
    )
    app = bolt_of(fake_slack, services, unused, queue)
    _, listed = dispatch(app, command("connect"))
    assert "connect" in str(listed) and gateway.called("views.open") == []
    dispatch(app, home_click(HOME, action_id=ids.ACTION_CONNECT))
    assert gateway.called("views.open") == []
    eventually(
        lambda: "Nobody connects a Kandev account here" in str(gateway.called("views.publish"))
    )
    assert gateway.called("views.open") == []


# ---- refusals and the parked click ---------------------------------------------------------------


def on_card(posted, gateway: FakeSlackGateway):
    card = posted(make_bundle())
    found = gateway.card_of(card.pending_id)
    assert found is not None
    return card, found[2]


def test_an_unlinked_click_is_refused_with_a_connect_button_then_offered_and_sent(
    app: App,
    posted,
    gateway: FakeSlackGateway,
    tokens: FakeTokens,
    fake_kandev: FakeKandev,
    store: Database,
) -> None:
    card, message = on_card(posted, gateway)
    dispatch(app, card_click(message, CHANNEL, card.ts, text="MongoDB", user=BOB))
    refusal = eventually(
        lambda: [c for c in gateway.called("chat.postEphemeral") if c["user"] == BOB.id]
    )[-1]
    assert "yours is not connected" in refusal["text"]
    assert ids.ACTION_CONNECT in str(refusal["blocks"])
    assert fake_kandev.called("answer") == []

    dispatch(app, listing_click(refusal["blocks"], CHANNEL, action_id=ids.ACTION_CONNECT, user=BOB))
    token = pat()
    tokens.users[token] = ANA
    _, acked = submit(app, opened_modal(gateway), token, user=BOB)
    assert acked["response_action"] == "update"
    offer = eventually(
        lambda: [
            c for c in gateway.called("chat.postEphemeral") if "Before you connected" in c["text"]
        ]
    )[-1]
    assert offer["channel"] == CHANNEL and "*MongoDB*" in offer["text"]

    dispatch(app, listing_click(offer["blocks"], CHANNEL, text="Send it", user=BOB))

    eventually(lambda: fake_kandev.called("answer"))
    resolved = eventually(
        lambda: (c := store.cards.get(card.pending_id)) and c.state is CardState.ANSWERED and c
    )
    assert resolved.outcome.by_user == BOB.id
    shown = eventually(
        lambda: [
            c for c in gateway.called("response_url") if c["text"] == words.parked_sent_message()
        ]
    )
    assert shown[-1]["replace_original"]
    # The same Send again (a double click) finds nothing kept; a redelivery says nothing.
    dispatch(app, listing_click(offer["blocks"], CHANNEL, text="Send it", user=BOB))
    eventually(lambda: [c for c in gateway.called("response_url") if "no longer kept" in c["text"]])
    assert len(fake_kandev.called("answer")) == 1


def test_discard_drops_the_kept_click(
    app: App, posted, gateway: FakeSlackGateway, tokens: FakeTokens, fake_kandev: FakeKandev
) -> None:
    card, message = on_card(posted, gateway)
    dispatch(app, card_click(message, CHANNEL, card.ts, text="MongoDB", user=BOB))
    dispatch(app, command("connect", user=BOB))
    token = pat()
    tokens.users[token] = ANA
    submit(app, opened_modal(gateway), token, user=BOB)
    offer = eventually(
        lambda: [c for c in gateway.called("chat.postEphemeral") if "Before you" in c["text"]]
    )[-1]

    dispatch(app, listing_click(offer["blocks"], CHANNEL, text="Discard", user=BOB))
    # Each click is answered in its lane: the Send is made once the Discard was told.
    eventually(
        lambda: [
            c
            for c in gateway.called("response_url")
            if c["text"] == words.parked_discarded_message()
        ]
    )
    dispatch(app, listing_click(offer["blocks"], CHANNEL, text="Send it", user=BOB))

    eventually(lambda: [c for c in gateway.called("response_url") if "no longer kept" in c["text"]])
    assert fake_kandev.called("answer") == []


def test_a_relink_verdict_is_told_with_a_connect_button(
    app: App,
    posted,
    gateway: FakeSlackGateway,
    tokens: FakeTokens,
    fake_kandev: FakeKandev,
    store: Database,
) -> None:
    """Kandev refuses a linked person's token on the answer itself (401): the link breaks,
    nothing is sent, and they are told with a Connect ("Reconnect") button."""
    from kandev_slack.kandev.errors import KandevAuthError

    card, message = on_card(posted, gateway)
    token = pat()
    tokens.users[token] = ANA
    dispatch(app, command("connect"))
    submit(app, opened_modal(gateway), token)
    fake_kandev.fail("answer", KandevAuthError("401"))

    dispatch(app, card_click(message, CHANNEL, card.ts, text="MongoDB"))

    told = eventually(
        lambda: [
            c
            for c in gateway.called("chat.postEphemeral")
            if c["user"] == ALICE_ID and "no longer accepts" in c["text"]
        ]
    )[-1]
    assert ids.ACTION_CONNECT in str(told["blocks"])
    link = store.links.get(ALICE_ID)
    assert link is not None and link.broken
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]


def test_the_refusal_kinds_that_ask_to_connect() -> None:
    from kandev_slack.slack.presenters import said
    from kandev_slack.usecases.answering.admission import Refusal
    from kandev_slack.usecases.answering.interactions import Refused
    from kandev_slack.usecases.answering.verdicts import Verdict

    for kind, asks in (
        ("connect", True),
        ("reconnect", True),
        ("viewer", False),
        ("forbidden", False),
    ):
        assert said.asks_to_connect(Refused(Refusal(kind))) is asks  # type: ignore[arg-type]
    assert said.asks_to_connect(Verdict("relink")) is True  # type: ignore[call-arg]
    assert said.asks_to_connect(Verdict("won")) is False  # type: ignore[call-arg]


def test_a_failure_while_keeping_the_token_is_said_and_nothing_is_kept(
    app: App, gateway: FakeSlackGateway, tokens: FakeTokens, store: Database, monkeypatch
) -> None:
    dispatch(app, command("connect"))
    token = pat()
    tokens.users[token] = ANA

    def unavailable(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("database is locked")

    monkeypatch.setattr(store.links, "link", unavailable)
    _, acked = submit(app, opened_modal(gateway), token)

    assert acked["response_action"] == "errors"
    assert "could not check or keep this token" in acked["errors"][ids.BLOCK_TOKEN]
    assert store.links.counts() == (0, 0)
