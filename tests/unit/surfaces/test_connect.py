"""A person's own Kandev account as Slack shows it (kandev_slack/surfaces/connect.py): the
connect modal has one input, says where to mint a token and never holds one; App Home's
section offers Connect / Disconnect / Reconnect at the top (under a notice) within Slack's
limit; a refusal carries the Connect button; the offer of a parked click names what was
clicked and on what, with Send it / Open the form and Discard, its buttons naming only the
item. Every rendering is within Slack's limits and notifies nobody, whatever the names Kandev
or the agent chose (property)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids, words
from kandev_slack.cards.ids import (
    CodecError,
    ConnectMetadata,
    parse_connect_metadata,
    parse_parked_value,
)
from kandev_slack.cards.limits import MAX_VIEW_BLOCKS
from kandev_slack.core.domain import Card, CardState
from kandev_slack.kits.fakeslack import blocks_text, validate_view
from kandev_slack.surfaces.connect import (
    CONNECT_LABEL,
    DISCONNECT_LABEL,
    RECONNECT_LABEL,
    account_blocks,
    account_reply,
    checking_modal,
    clicked_label,
    connect_modal,
    connected_modal,
    parked_offer,
    refusal_modal,
    with_account_blocks,
    with_connect_button,
)
from kandev_slack.surfaces.home import render_home
from tests.kit.factories import CHANNEL, DB_QUESTION, KANDEV_URL, NOW, TS, make_bundle, make_task
from tests.unit.cards.checks import assert_valid_message, assert_valid_view
from tests.unit.cards.safety import assert_cannot_notify
from tests.unit.cards.strategies import mention_texts
from tests.unit.cards.test_limits_property import SETTINGS

TOKEN = "kandev_pat_0123abcd_" + "T" * 43


@dataclass(frozen=True)
class Shown:
    display_name: str
    email: str
    broken: bool = False


@dataclass(frozen=True)
class Click:
    action: str
    option: tuple[str, str] | None = None
    opens: str = ""


def card_of(headline: str = "Which database should we use?", **question: object) -> Card:
    bundle = make_bundle({**DB_QUESTION, "prompt": headline, **question})
    return Card(
        pending_id=bundle.pending_id,
        task_id=bundle.task_id,
        session_id=bundle.session_id,
        workspace_id="ws-1",
        channel=CHANNEL,
        ts=TS,
        state=CardState.PENDING,
        item=bundle,
        task=make_task(),
        created_at=NOW,
        updated_at=NOW,
    )


def buttons(blocks: list[dict]) -> list[tuple[str, str]]:
    """(label, action_id) of every button (accessories too)."""
    found = []
    for block in blocks:
        for element in [*block.get("elements", []), block.get("accessory") or {}]:
            if element.get("type") == "button":
                found.append((element["text"]["text"], element["action_id"]))
    return found


accounts = (
    st.builds(Shown, mention_texts(max_size=300), mention_texts(max_size=300), st.booleans())
    | st.none()
)


# ---- the modal -----------------------------------------------------------------------------


def test_the_modal_asks_for_one_token_and_says_where_to_mint_it() -> None:
    metadata = ConnectMetadata(channel=CHANNEL, response_url="https://hooks.slack.test/r").encode()
    view = connect_modal(metadata)

    assert_valid_view(view)
    inputs = [b for b in view["blocks"] if b["type"] == "input"]
    assert [(b["block_id"], b["element"]["action_id"]) for b in inputs] == [
        (ids.BLOCK_TOKEN, ids.ACTION_TOKEN)
    ]
    assert "initial_value" not in inputs[0]["element"]
    assert words.MINT_WHERE in blocks_text(view["blocks"])
    assert "expiry" in blocks_text(view["blocks"])
    assert view["callback_id"] == ids.CALLBACK_CONNECT and view["submit"]["text"] == "Connect"
    assert parse_connect_metadata(view["private_metadata"]) == ConnectMetadata(
        channel=CHANNEL, response_url="https://hooks.slack.test/r"
    )


def test_the_modal_brought_back_says_why_and_never_holds_the_token() -> None:
    why = words.connect_problem_message("refused")
    view = connect_modal("{}", Shown("Ana", "ana@example.com"), problem=why)

    assert_valid_view(view)
    text = blocks_text(view["blocks"])
    assert "does not accept this token" in text and "You are connected as *Ana*" in text
    assert TOKEN not in json.dumps(view)


@SETTINGS
@given(account=accounts, problem=st.sampled_from(["", "malformed", "refused", "no_key", "?"]))
def test_every_connect_modal_is_valid_and_notifies_nobody(
    account: Shown | None, problem: str
) -> None:
    why = words.connect_problem_message(problem) if problem else ""
    view = connect_modal("{}", account, problem=why)
    assert_valid_view(view)
    assert_cannot_notify(view)


@SETTINGS
@given(
    account=st.builds(Shown, mention_texts(max_size=300), mention_texts(max_size=300)),
    replaced=st.booleans(),
)
def test_every_connected_modal_is_valid_and_notifies_nobody(account: Shown, replaced: bool) -> None:
    view = connected_modal(account, replaced=replaced)
    assert_valid_view(view)
    assert_cannot_notify(view)
    assert ("earlier token" in blocks_text(view["blocks"])) is replaced


def test_checking_and_refusal_modals_are_valid() -> None:
    assert_valid_view(checking_modal())
    refused = refusal_modal(words.connect_message())
    assert_valid_view(refused)
    assert buttons(refused["blocks"]) == [(CONNECT_LABEL, ids.ACTION_CONNECT)]


def test_tampered_metadata_is_refused_and_none_is_no_place() -> None:
    assert parse_connect_metadata("") == ConnectMetadata()
    for forged in ("nope", '{"x": 1}', '{"c": 5}'):
        try:
            parse_connect_metadata(forged)
        except CodecError:
            continue
        raise AssertionError(f"accepted {forged!r}")


# ---- App Home and whoami -----------------------------------------------------------------------


def test_home_offers_connect_disconnect_or_reconnect() -> None:
    assert buttons(account_blocks(None)) == [(CONNECT_LABEL, ids.ACTION_CONNECT)]
    linked = account_blocks(Shown("Ana", "ana@example.com"))
    assert "Connected to Kandev as *Ana* (ana@example.com)" in blocks_text(linked)
    assert buttons(linked) == [(DISCONNECT_LABEL, ids.ACTION_DISCONNECT)]
    assert linked[0]["accessory"]["confirm"]["confirm"]["text"] == "Disconnect"
    broken = account_blocks(Shown("Ana", "ana@example.com", broken=True))
    assert "Your Kandev link no longer works" in blocks_text(broken)
    assert buttons(broken) == [(RECONNECT_LABEL, ids.ACTION_CONNECT)]


def test_the_section_goes_on_top_under_a_notice_within_the_limit() -> None:
    home = render_home([], [], kandev_url=KANDEV_URL, now=NOW, notice="You did something.")
    blocks = with_account_blocks(home["blocks"], None)
    assert blocks[0]["block_id"] == ids.BLOCK_NOTICE
    assert blocks[2]["block_id"] == ids.BLOCK_ACCOUNT
    full = [{"type": "divider"}] * MAX_VIEW_BLOCKS
    topped = with_account_blocks(full, Shown("Ana", "a@b.c"))
    assert len(topped) == MAX_VIEW_BLOCKS and topped[0]["block_id"] == ids.BLOCK_ACCOUNT


@SETTINGS
@given(account=accounts)
def test_every_home_section_is_valid_and_notifies_nobody(account: Shown | None) -> None:
    home = render_home([], [], kandev_url=KANDEV_URL, now=NOW)
    view = {**home, "blocks": with_account_blocks(home["blocks"], account)}
    assert [str(v) for v in validate_view("views.publish", view)] == []
    assert_cannot_notify(view)
    text, blocks = account_reply(account)
    assert_valid_message({"text": text, "blocks": blocks})
    assert_cannot_notify({"text": text, "blocks": blocks})


# ---- refusals and the parked click -----------------------------------------------------------


def test_a_refusal_carries_the_connect_button() -> None:
    blocks = with_connect_button(words.reconnect_message(), broken=True)
    assert_valid_message({"text": words.reconnect_message(), "blocks": blocks})
    assert buttons(blocks) == [(RECONNECT_LABEL, ids.ACTION_CONNECT)]


def test_what_was_clicked_reads_as_its_button() -> None:
    card = card_of()
    assert clicked_label(Click("answer", ("db", "q1_opt2")), card) == "MongoDB"
    assert clicked_label(Click("answer", ("db", "gone")), card) == "gone"
    assert clicked_label(Click("answer", opens="answer"), card) == "Answer…"
    assert clicked_label(Click("answer", opens="other"), card) == "Other answer…"
    assert clicked_label(Click("reject", opens="reject"), card) == "Reject…"
    assert clicked_label(Click("reject"), card) == "Skip"
    assert clicked_label(Click("claim"), card) == "👀 I'm on it"


def test_the_offer_names_the_click_and_the_item_and_only_the_item_in_its_buttons() -> None:
    card = card_of()
    shown = parked_offer(Click("answer", ("db", "q1_opt2")), card)
    assert shown is not None
    text, blocks = shown
    assert text == (
        "Before you connected, you clicked *MongoDB* on _Which database should we use?_ — "
        "send it now?"
    )
    assert buttons(blocks) == [
        ("Send it", ids.ACTION_PARKED_SEND),
        ("Discard", ids.ACTION_PARKED_DISCARD),
    ]
    values = {b["value"] for b in blocks[1]["elements"]}
    assert {parse_parked_value(v).pending_id for v in values} == {card.pending_id}
    form = parked_offer(Click("answer", opens="answer"), card)
    assert form is not None and "open the form now?" in form[0]
    assert buttons(form[1])[0] == ("Open the form", ids.ACTION_PARKED_SEND)


def test_an_item_whose_id_does_not_fit_a_button_is_not_offered() -> None:
    card = card_of()
    long = card.model_copy(update={"pending_id": "p" * 2100})
    assert parked_offer(Click("answer", ("db", "q1_opt2")), long) is None


@SETTINGS
@given(
    headline=mention_texts(max_size=2000),
    label=mention_texts(max_size=300),
    opens=st.sampled_from(["", "answer", "other", "reject"]),
)
def test_every_offer_is_valid_and_notifies_nobody(headline: str, label: str, opens: str) -> None:
    option = {"option_id": "o1", "label": label or "x", "description": ""}
    card = card_of(headline, options=[option])
    shown = parked_offer(Click("answer", None if opens else ("db", "o1"), opens), card)
    assert shown is not None
    text, blocks = shown
    assert_valid_message({"text": text, "blocks": blocks})
    assert_cannot_notify({"text": text, "blocks": blocks})
