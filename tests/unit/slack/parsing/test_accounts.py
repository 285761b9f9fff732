"""Payloads about a person's own Kandev account (kandev_slack/slack/parsing/accounts.py): the
account subcommands are the verb alone; a button says who and where (a message, a modal,
Home); the connect modal's submission carries its token (never in its repr) and where the
person asked to connect (tampered metadata: nowhere); an offer's button names its item (a
value not ours: none). A payload without Slack's shape is None."""

from __future__ import annotations

from kandev_slack.cards import ids
from kandev_slack.cards.ids import ConnectMetadata, ParkedValue
from kandev_slack.kits.fakeslack import ALICE, find_element, payloads
from kandev_slack.slack.parsing.accounts import (
    account_click,
    account_command,
    parked_choice,
    token_form,
)
from kandev_slack.surfaces.connect import connect_button, connect_modal, parked_offer
from kandev_slack.usecases.answering.admission import Where
from tests.unit.slack.slack_bodies import (
    RESPONSE_URL,
    TRIGGER_ID,
    VIEW_ID,
    WS,
    home_click,
    listing_click,
    submission,
)
from tests.unit.surfaces.test_connect import Click, card_of

TOKEN = "kandev_pat_0123abcd_" + "T" * 43


def test_the_account_subcommands_are_the_verb_alone() -> None:
    assert account_command("connect") == "connect"
    assert account_command("  WhoAmI ") == "whoami"
    assert account_command("disconnect") == "disconnect"
    for other in ("", "connect me", "connection", "help", "subscribe", "label:connect"):
        assert account_command(other) is None


def test_a_button_says_who_and_where() -> None:
    blocks = [{"type": "actions", "block_id": "a", "elements": [connect_button()]}]
    on_message = account_click(listing_click(blocks, "C0QUESTION", action_id=ids.ACTION_CONNECT))
    assert on_message is not None
    assert on_message.where == Where(ALICE.id, "C0QUESTION", RESPONSE_URL)
    assert (on_message.trigger_id, on_message.in_modal, on_message.on_home) == (
        TRIGGER_ID,
        False,
        False,
    )
    home = {"type": "home", "blocks": blocks}
    on_home = account_click(home_click(home, action_id=ids.ACTION_CONNECT))
    assert on_home is not None and on_home.on_home and not on_home.in_modal
    assert on_home.where == Where(ALICE.id, None, None)
    in_modal = account_click(
        payloads.block_actions(
            WS,
            ALICE,
            container={"type": "view", "view_id": VIEW_ID},
            actions=[payloads.action_item(find_element(blocks, action_id=ids.ACTION_CONNECT))],
            trigger_id=TRIGGER_ID,
            response_url=None,
            view={"type": "modal", "id": VIEW_ID, "blocks": blocks},
        )
    )
    assert in_modal is not None and in_modal.in_modal and not in_modal.on_home
    assert account_click({"type": "block_actions"}) is None


def test_the_submitted_modal_carries_its_token_and_place_and_hides_the_token() -> None:
    meta = ConnectMetadata(channel="C0QUESTION", response_url=RESPONSE_URL)
    view = connect_modal(meta.encode())

    form = token_form(submission(view, {ids.BLOCK_TOKEN: {ids.ACTION_TOKEN: TOKEN}}))

    assert form is not None
    assert (form.user_id, form.token, form.view_id, form.meta) == (ALICE.id, TOKEN, VIEW_ID, meta)
    assert TOKEN not in repr(form)


def test_an_empty_token_tampered_metadata_and_a_broken_payload() -> None:
    view = connect_modal("not ours")
    form = token_form(submission(view, {}))
    assert form is not None and form.token == "" and form.meta == ConnectMetadata()
    assert token_form({"type": "view_submission", "view": {}}) is None


def test_an_offer_button_names_its_item_and_a_forged_value_none() -> None:
    card = card_of()
    shown = parked_offer(Click("answer", ("db", "q1_opt2")), card)
    assert shown is not None
    body = listing_click(shown[1], "C0QUESTION", text="Send it")
    choice = parked_choice(body)
    assert choice is not None and choice.pending_id == card.pending_id
    assert (choice.trigger_id, choice.response_url) == (TRIGGER_ID, RESPONSE_URL)
    body["actions"][0]["value"] = ParkedValue(pending_id="x").encode()[:-2]
    forged = parked_choice(body)
    assert forged is not None and forged.pending_id == ""
    assert parked_choice({"actions": []}) is None
