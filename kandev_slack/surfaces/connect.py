"""A person's own Kandev account as Slack shows it (pure): the connect modal (one input for a
personal access token, a line saying where to mint one), what it turns into ("Checking…",
"Connected"), App Home's account section (Connect / Disconnect / Reconnect), the answer to
``/kandev-questions whoami``, a refusal told with a Connect button, and the offer of a click
made before connecting ("Send it" / "Open the form", "Discard").

A token is never shown back: the modal brought back after a refusal starts empty. The words
are kandev_slack/cards/words.py's.
"""

from __future__ import annotations

from typing import Any, Protocol

from kandev_slack.cards import ids, words
from kandev_slack.cards.blocks import Block, actions, button, context, modal_view, plain, section
from kandev_slack.cards.ids import CodecError, ParkedValue
from kandev_slack.cards.limits import (
    MAX_PLACEHOLDER,
    MAX_SECTION_TEXT,
    MAX_VIEW_BLOCKS,
)
from kandev_slack.cards.text import shorten_mrkdwn
from kandev_slack.core.domain import Card
from kandev_slack.kinds.registry import spec_of


class Account(Protocol):
    """A person's link to their Kandev account (kandev_slack/usecases/answering/linking.py
    ``LinkedAs``); None where a person has none."""

    @property
    def display_name(self) -> str: ...
    @property
    def email(self) -> str: ...
    @property
    def broken(self) -> bool: ...


class Clicked(Protocol):
    """What a person clicked (kandev_slack/usecases/answering/admission.py ``Request``)."""

    @property
    def action(self) -> str: ...
    @property
    def option(self) -> tuple[str, str] | None: ...
    @property
    def opens(self) -> str: ...


CONNECT_LABEL = "Connect your Kandev account"
RECONNECT_LABEL = "Reconnect"
DISCONNECT_LABEL = "Disconnect"
#: A token is 63 characters; room for stray spaces around a pasted one, no room for an essay.
MAX_TOKEN_INPUT = 200
#: The block ids of the offer's text and buttons (the buttons' values name the item).
BLOCK_PARKED = "kq_parked"
BLOCK_PARKED_ACTIONS = "kq_parked_actions"
BLOCK_CONNECT_ACTIONS = "kq_connect_actions"
BLOCK_CONNECT_NOTE = "kq_connect_note"
#: What each click that is no option was, as its button reads on a card.
_CLICKED = {
    ("reject", ""): "Skip",
    ("reject", "reject"): "Reject…",
    ("answer", "answer"): "Answer…",
    ("answer", "other"): "Other answer…",
    ("claim", ""): "👀 I'm on it",
}


def _text(text: str) -> str:
    return shorten_mrkdwn(text.strip() or " ", MAX_SECTION_TEXT, note="…")[0]


# ---- the modal -------------------------------------------------------------------------------


def connect_button(*, broken: bool = False, primary: bool = True) -> Block:
    """ "Connect your Kandev account" ("Reconnect" for a broken link): opens the modal."""
    label = RECONNECT_LABEL if broken else CONNECT_LABEL
    return button(label, ids.ACTION_CONNECT, value="connect", style="primary" if primary else None)


def connect_modal(
    metadata: str, account: Account | None = None, *, problem: str = ""
) -> dict[str, Any]:
    """The modal asking for a personal access token: where to mint one, the one input, and
    (``account``) the link it would replace. ``problem``: why the last token was not linked,
    shown under the input (the modal brought back by ``views.update``, where Slack shows no
    field errors); the input starts empty either way."""
    blocks: list[Block] = [section(_text(words.connect_intro()))]
    if account is not None:
        note = words.connect_replaces_note(
            account.display_name, account.email, broken=account.broken
        )
        blocks.append(context(_text(note)))
    blocks.append(
        {
            "type": "input",
            "block_id": ids.BLOCK_TOKEN,
            "label": plain("Personal access token", 2000),
            "element": {
                "type": "plain_text_input",
                "action_id": ids.ACTION_TOKEN,
                "placeholder": plain(words.TOKEN_PLACEHOLDER, MAX_PLACEHOLDER),
                "max_length": MAX_TOKEN_INPUT,
            },
        }
    )
    if problem:
        blocks.append(context(_text(f"⚠️ {problem}"), block_id=BLOCK_CONNECT_NOTE))
    return modal_view(
        ids.CALLBACK_CONNECT, "Connect Kandev", blocks, submit="Connect", metadata=metadata
    )


def checking_modal() -> dict[str, Any]:
    """What a submitted token turns into while Kandev is slow to say whose it is."""
    return modal_view(
        ids.CALLBACK_CONNECTED,
        "Connect Kandev",
        [section(_text(words.checking_token_message()))],
        close="Close",
    )


def connected_modal(account: Account, *, replaced: bool = False) -> dict[str, Any]:
    """A token Kandev took: whose it is (``replaced``: an earlier link of theirs)."""
    text = words.connected_message(account.display_name, account.email, replaced=replaced)
    return modal_view(ids.CALLBACK_CONNECTED, "Connected", [section(_text(text))], close="Done")


def refusal_modal(text: str) -> dict[str, Any]:
    """A submitted form refused because the person must connect (again): why, and the Connect
    button (a modal on top of this one)."""
    blocks = [section(_text(text)), actions([connect_button()], block_id=BLOCK_CONNECT_ACTIONS)]
    return modal_view(ids.CALLBACK_RESULT, "Not sent", blocks, close="Close")


# ---- App Home, whoami --------------------------------------------------------------------------


def account_blocks(account: Account | None) -> list[Block]:
    """App Home's section: Connect (no ``account``) / "Connected to Kandev as …" with
    Disconnect / a broken link with Reconnect, then a divider."""
    if account is not None and not account.broken:
        text = words.account_message(account.display_name, account.email)
        accessory = _disconnect_button()
    elif account is not None:
        text = words.broken_link_message(account.display_name, account.email)
        accessory = connect_button(broken=True)
    else:
        text = words.not_connected_message()
        accessory = connect_button()
    block = section(_text(text), block_id=ids.BLOCK_ACCOUNT)
    block["accessory"] = accessory
    return [block, {"type": "divider"}]


def with_account_blocks(blocks: list[Block], account: Account | None) -> list[Block]:
    """A Home view's blocks with the account section at the top (under a notice), within
    Slack's limit (the end of the list gives way)."""
    extra = account_blocks(account)
    kept = blocks[: MAX_VIEW_BLOCKS - len(extra)]
    at = 2 if kept and kept[0].get("block_id") == ids.BLOCK_NOTICE else 0
    return kept[:at] + extra + kept[at:]


def account_reply(account: Account | None) -> tuple[str, list[Block]]:
    """``/kandev-questions whoami``: the text and blocks (with Disconnect, Reconnect or
    Connect)."""
    blocks = account_blocks(account)[:1]
    return blocks[0]["text"]["text"], blocks


def _disconnect_button() -> Block:
    element = button(DISCONNECT_LABEL, ids.ACTION_DISCONNECT, value="disconnect")
    element["confirm"] = {
        "title": plain("Disconnect Kandev?", 100),
        "text": plain(
            "The bot forgets your token; your answers no longer reach Kandev as you.", 300
        ),
        "confirm": plain("Disconnect", 30),
        "deny": plain("Keep", 30),
    }
    return element


# ---- refusals with a Connect button ------------------------------------------------------------


def with_connect_button(text: str, *, broken: bool = False) -> list[Block]:
    """An ephemeral message's blocks: ``text`` (safe mrkdwn) and the Connect button."""
    return [
        section(_text(text)),
        actions([connect_button(broken=broken)], block_id=BLOCK_CONNECT_ACTIONS),
    ]


# ---- the click made before connecting ----------------------------------------------------------


def clicked_label(request: Clicked, card: Card) -> str:
    """What the person clicked, as its button read: an option's label, else the button's."""
    if request.option is not None:
        return _option_label(card, *request.option)
    return _CLICKED.get((request.action, request.opens), request.action)


def _option_label(card: Card, question_id: str, option_id: str) -> str:
    if spec_of(card).has_whole_view:  # an approval: its options are the agent's
        offered = card.approval.option(option_id)
        return offered.label if offered is not None else option_id
    question = card.bundle.question(question_id)
    option = question.option(option_id) if question is not None else None
    return option.label if option is not None else option_id


def parked_offer(request: Clicked, card: Card) -> tuple[str, list[Block]] | None:
    """The offer of ``request``, a click made on ``card`` before connecting: what and where,
    "Send it" (or "Open the form") and "Discard". None when its item's id does not fit a
    button's value."""
    opens_form = bool(request.opens)
    text = words.parked_offer_message(
        clicked_label(request, card), card.item.headline, opens_form=opens_form
    )
    try:
        value = ParkedValue(pending_id=card.pending_id).encode()
    except CodecError:
        return None
    send = "Open the form" if opens_form else "Send it"
    blocks = [
        section(_text(text), block_id=BLOCK_PARKED),
        actions(
            [
                button(send, ids.ACTION_PARKED_SEND, value=value, style="primary"),
                button("Discard", ids.ACTION_PARKED_DISCARD, value=value),
            ],
            block_id=BLOCK_PARKED_ACTIONS,
        ),
    ]
    return text, blocks


def note_blocks(text: str) -> list[Block]:
    """A one-section message (what became of an offer, a disconnect)."""
    return [section(_text(text))]
