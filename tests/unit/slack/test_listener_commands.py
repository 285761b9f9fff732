"""kandev_slack/slack/listeners/commands.py, shortcuts.py, events.py and fallback.py on a real
Bolt App."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from slack_bolt import App

from kandev_slack.cards import ids, words
from kandev_slack.kits.fakeslack import FakeSlack, blocks_text
from kandev_slack.slack.app import build_bolt_app
from kandev_slack.slack.listeners import commands
from kandev_slack.slack.services import Services
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database
from tests.kit.factories import ALICE_ID, CHANNEL, answered, make_bundle, numbered_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway
from tests.unit.slack.slack_bodies import (
    RESPONSE_URL,
    TRIGGER_ID,
    command,
    dispatch,
    event,
    eventually,
    listing_click,
    shortcut,
    submission,
)

# ---- /kandev-questions -----------------------------------------------------------------------


def test_the_command_acks_with_the_listing_ready_in_time(
    fake_slack: FakeSlack,
    services: Services,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    monkeypatch,
) -> None:
    # "In time", whatever the machine: the budget is read when the listeners are registered,
    # so the app is built after it is set.
    monkeypatch.setattr(commands, "LIST_BUDGET_S", 30.0)
    web = make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url)
    bolt = build_bolt_app(web, services, signing_secret=None, socket_mode=True)
    fake_kandev.add(make_bundle(), title="Pick a datastore")

    status, acked = dispatch(bolt, command(""))

    assert status == 200
    assert acked["response_type"] == "ephemeral"
    assert "Pick a datastore" in blocks_text(acked["blocks"])
    assert gateway.called("response_url") == []


def _slow_listing(fake_kandev: FakeKandev, monkeypatch) -> threading.Event:
    """Kandev's list waits until the returned event is set."""
    kandev_answers = threading.Event()
    list_listed = fake_kandev.list_listed

    def slow_list_listed(**kwargs):
        kandev_answers.wait(10)
        return list_listed(**kwargs)

    monkeypatch.setattr(fake_kandev, "list_listed", slow_list_listed)
    return kandev_answers


def test_a_listing_not_ready_at_once_is_acked_empty_and_follows_as_an_ephemeral(
    bolt: App, fake_kandev: FakeKandev, gateway: FakeSlackGateway, monkeypatch
) -> None:
    """One visible message, and an ack that does not wait for Kandev: nothing is shown by the
    ack (no "Looking…"), the listing comes by chat.postEphemeral in the command's channel (a
    response_url that never answers cannot delay it)."""
    fake_kandev.add(make_bundle(), title="Pick a datastore")
    kandev_answers = _slow_listing(fake_kandev, monkeypatch)

    status, acked = dispatch(bolt, command(""))
    assert (status, acked) == (200, "")
    assert gateway.called("chat.postEphemeral") == []

    kandev_answers.set()
    [reply] = eventually(lambda: gateway.called("chat.postEphemeral"))
    assert (reply["channel"], reply["user"]) == (CHANNEL, ALICE_ID)
    assert "Pick a datastore" in blocks_text(reply["blocks"])
    assert gateway.called("response_url") == []


def test_a_listing_the_bot_cannot_post_where_it_was_asked_follows_by_the_response_url(
    bolt: App, fake_kandev: FakeKandev, gateway: FakeSlackGateway, monkeypatch
) -> None:
    """A conversation the bot is not in (chat.postEphemeral refused): the response_url."""
    fake_kandev.add(make_bundle(), title="Pick a datastore")
    kandev_answers = _slow_listing(fake_kandev, monkeypatch)
    gateway.fail("chat.postEphemeral", "not_in_channel")

    assert dispatch(bolt, command("")) == (200, "")
    kandev_answers.set()

    [reply] = eventually(lambda: gateway.called("response_url"))
    assert reply["response_url"] == RESPONSE_URL and not reply["replace_original"]
    assert "Pick a datastore" in blocks_text(reply["blocks"])


def test_the_ack_stops_waiting_for_listings_while_they_are_slow_and_waits_again_after() -> None:
    now = [0.0]
    times = commands.ListingTimes(commands.LIST_BUDGET_S, remembered=3, clock=lambda: now[0])
    assert times.budget() == commands.LIST_BUDGET_S  # nothing known yet: wait for the list

    def listing(took: float) -> None:
        future: Future = Future()
        times.timing(future)
        now[0] += took
        future.set_result(None)

    for _ in range(2):
        listing(0.200)  # a thousand questions waiting
    assert times.budget() == 0.0  # the ack no longer waits: the list follows by response_url
    for _ in range(2):
        listing(0.004)
    # Lists are quick again (the median of the last three).
    assert times.budget() == commands.LIST_BUDGET_S


def test_a_command_without_its_user_is_acked_and_nothing_else(
    bolt: App, fake_kandev: FakeKandev, gateway: FakeSlackGateway
) -> None:
    body = {**command(""), "user_id": ""}

    assert dispatch(bolt, body) == (200, "")
    assert fake_kandev.calls == [] and gateway.calls == []


def test_next_page_replaces_the_listing_through_the_response_url(
    bolt: App, fake_kandev: FakeKandev, gateway: FakeSlackGateway, services
) -> None:
    services.listing.page_size = 1
    for n in (1, 2):
        fake_kandev.add(numbered_bundle(n), title=f"Task {n}")
    first = services.listing.reply("", ALICE_ID)

    status, _ = dispatch(bolt, listing_click(first.blocks, CHANNEL, action_id=ids.ACTION_NEXT))

    assert status == 200
    [reply] = eventually(lambda: gateway.called("response_url"))
    assert (reply["response_url"], reply["replace_original"]) == (RESPONSE_URL, True)
    assert "Task 2" in blocks_text(reply["blocks"]) and "Task 1" not in blocks_text(reply["blocks"])


def test_a_forged_next_page_is_told(bolt: App, gateway: FakeSlackGateway) -> None:
    blocks = [
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "action_id": ids.ACTION_NEXT,
                    "text": {"type": "plain_text", "text": "Next"},
                    "value": '{"f": "", "i": ""}',  # not one of ours
                }
            ],
        }
    ]

    dispatch(bolt, listing_click(blocks, CHANNEL, action_id=ids.ACTION_NEXT))

    [told] = eventually(lambda: gateway.called("chat.postEphemeral"))
    assert told["text"] == words.tampered_next_message()


# ---- "Reject agent question" -------------------------------------------------------------


def test_the_shortcut_on_a_pending_card_opens_the_reject_form(
    bolt: App, posted, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())

    assert dispatch(bolt, shortcut(CHANNEL, card.ts)) == (200, "")

    [opened] = eventually(lambda: gateway.called("views.open"))
    assert opened["trigger_id"] == TRIGGER_ID
    meta = ids.parse_modal_metadata(opened["view"]["private_metadata"])
    assert (meta.pending_id, meta.ts, meta.origin) == (card.pending_id, card.ts, "shortcut")


def test_the_shortcut_elsewhere_or_on_a_closed_card_is_told(
    bolt: App, posted, gateway: FakeSlackGateway, store: Database
) -> None:
    card = posted(make_bundle())
    dispatch(bolt, shortcut(CHANNEL, "1700000000.777777"))
    [told] = eventually(lambda: gateway.called("chat.postEphemeral"))
    assert (told["channel"], told["text"]) == (CHANNEL, words.not_a_card_message())

    assert store.cards.transition(card.pending_id, answered("U0BOB00002"))
    dispatch(bolt, shortcut(CHANNEL, card.ts))
    eventually(lambda: len(gateway.called("chat.postEphemeral")) == 2)
    assert store.audit_log.audit_entries(limit=1)[0].result == "closed"
    assert gateway.called("views.open") == []


def test_a_malformed_shortcut_is_refused_and_told(
    bolt: App, gateway: FakeSlackGateway, store: Database
) -> None:
    body = shortcut(CHANNEL, "1700000000.777777")
    body["message"] = {"type": "message"}  # no ts

    dispatch(bolt, body)

    [told] = eventually(lambda: gateway.called("chat.postEphemeral"))
    assert told["text"] == words.unusable_message("malformed", form=False)
    assert store.audit_log.audit_entries(limit=1)[0].result == "malformed"


# ---- app_home_opened -----------------------------------------------------------------------


def test_opening_the_home_tab_publishes_it(
    bolt: App, fake_kandev: FakeKandev, gateway: FakeSlackGateway, store: Database
) -> None:
    fake_kandev.add(make_bundle(), title="Pick a datastore")

    opened = {"type": "app_home_opened", "user": ALICE_ID, "channel": "D0ALICE", "tab": "home"}
    status, _ = dispatch(bolt, event(opened))

    assert status == 200
    [published] = eventually(lambda: gateway.called("views.publish"))
    assert published["user_id"] == ALICE_ID
    assert "Pick a datastore" in blocks_text(published["view"]["blocks"])
    assert store.viewers.home_viewers(since=make_bundle().created_at) == [ALICE_ID]


def test_the_messages_tab_and_a_malformed_event_publish_nothing(
    bolt: App, gateway: FakeSlackGateway, store: Database
) -> None:
    messages_tab = {"type": "app_home_opened", "user": ALICE_ID, "tab": "messages"}
    no_user = {"type": "app_home_opened", "tab": "home"}

    assert dispatch(bolt, event(messages_tab))[0] == 200
    assert dispatch(bolt, event(no_user))[0] == 200
    assert dispatch(bolt, event({"type": "reaction_added", "user": ALICE_ID}))[0] == 200

    # Bolt runs event listeners after the ack: a later Home shows that nothing came before.
    dispatch(bolt, event({"type": "app_home_opened", "user": "U0BOB00002", "tab": "home"}))
    eventually(lambda: gateway.called("views.publish"))
    assert [c["user_id"] for c in gateway.called("views.publish")] == ["U0BOB00002"]


# ---- what no listener claims ---------------------------------------------------------------


def test_an_unknown_button_is_acked_audited_and_told(
    bolt: App, posted, gateway: FakeSlackGateway, store: Database
) -> None:
    card = posted(make_bundle())
    blocks = [
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "action_id": "kq_retired_button",
                    "text": {"type": "plain_text", "text": "Old"},
                    "value": "x",
                }
            ],
        }
    ]
    body = listing_click(blocks, CHANNEL, action_id="kq_retired_button")
    body["container"] = {**body["container"], "message_ts": card.ts, "is_ephemeral": False}

    assert dispatch(bolt, body) == (200, "")

    [told] = eventually(lambda: gateway.called("chat.postEphemeral"))
    assert told["text"] == words.unknown_action_message()
    [entry] = store.audit_log.audit_entries(limit=1)
    assert (entry.result, entry.pending_id) == ("unknown_action", card.pending_id)


def test_an_unknown_form_is_refused_in_the_form(bolt: App, store: Database) -> None:
    view = {
        "type": "modal",
        "callback_id": "kq_retired_modal",
        "title": {"type": "plain_text", "text": "Old"},
        "blocks": [
            {
                "type": "input",
                "block_id": "old_input",
                "label": {"type": "plain_text", "text": "Old"},
                "element": {"type": "plain_text_input", "action_id": "old"},
            }
        ],
    }

    _, acked = dispatch(bolt, submission(view, {"old_input": {"old": "hi"}}))

    assert acked == {
        "response_action": "errors",
        "errors": {"old_input": words.unknown_form_message()},
    }
    assert store.audit_log.audit_entries(limit=1)[0].result == "unknown_form"


def test_an_unknown_shortcut_and_command_are_answered(
    bolt: App, gateway: FakeSlackGateway, store: Database
) -> None:
    body = {**shortcut(CHANNEL, "1700000000.777777"), "callback_id": "retired_shortcut"}
    assert dispatch(bolt, body) == (200, "")
    [told] = eventually(lambda: gateway.called("chat.postEphemeral"))
    assert told["text"] == words.unknown_action_message()
    assert store.audit_log.audit_entries(limit=1)[0].result == "unknown_shortcut"

    status, acked = dispatch(bolt, {**command("x"), "command": "/retired"})
    assert (status, acked) == (200, words.unknown_command_message("/retired"))
