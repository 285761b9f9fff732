"""Slack payloads about a person's own Kandev account -> what they ask (parsing only, no
decisions): ``/kandev-questions connect | whoami | disconnect``, a Connect or Disconnect
button, the connect modal's submission (its token), a button of the offer of a click made
before connecting.

Each function returns None for a payload without Slack's shape (logged); the token is never
logged, and a submission's ``repr`` never shows it."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from kandev_slack.cards.ids import (
    ACTION_TOKEN,
    BLOCK_TOKEN,
    CodecError,
    ConnectMetadata,
    parse_connect_metadata,
    parse_parked_value,
)
from kandev_slack.slack.parsing import raw_payload
from kandev_slack.slack.parsing.payloads import (
    BlockAction,
    PayloadError,
    ViewSubmission,
    parse,
)
from kandev_slack.usecases.answering.admission import Where

log = logging.getLogger(__name__)

#: ``/kandev-questions <verb>``: a person's own Kandev account.
AccountVerb = Literal["connect", "whoami", "disconnect"]
VERBS: frozenset[str] = frozenset({"connect", "whoami", "disconnect"})


def account_command(text: str) -> AccountVerb | None:
    """The account subcommand ``text`` is (the verb alone, any case), else None (a listing
    filter, another subcommand)."""
    verb = " ".join((text or "").split()).casefold()
    return verb if verb in VERBS else None  # type: ignore[return-value]


@dataclass(frozen=True)
class AccountClick:
    """A Connect / Disconnect button: who, where to tell them, Slack's trigger (to open the
    modal) and whether it was clicked in a modal (the modal then goes on top) or on Home."""

    user_id: str
    where: Where
    trigger_id: str
    in_modal: bool = False
    on_home: bool = False


def account_click(body: Any) -> AccountClick | None:
    try:
        payload = parse(BlockAction, body)
    except PayloadError as exc:
        log.warning("refused a malformed account button: %s", exc)
        return None
    container = payload.container
    where = Where(payload.user_id, payload.channel_id or None, payload.response_url or None)
    on_home = container.type == "view" and not payload.in_modal
    return AccountClick(
        payload.user_id, where, payload.trigger_id, in_modal=payload.in_modal, on_home=on_home
    )


@dataclass(frozen=True)
class TokenForm:
    """The connect modal, submitted: who, the token they pasted (never shown), the modal and
    where they asked to connect (its metadata; tampered: nowhere)."""

    user_id: str
    token: str = field(repr=False)
    view_id: str
    meta: ConnectMetadata


def token_form(body: Any) -> TokenForm | None:
    try:
        payload = parse(ViewSubmission, body)
    except PayloadError as exc:
        log.warning("refused a malformed connect modal: %s", exc)
        return None
    inputs = raw_payload.state_values(body).get(BLOCK_TOKEN) or {}
    entered = inputs.get(ACTION_TOKEN) if isinstance(inputs, dict) else None
    value = entered.get("value") if isinstance(entered, dict) else None
    try:
        meta = parse_connect_metadata(payload.view.private_metadata)
    except CodecError:
        log.warning("a connect modal's metadata is not ours: its place is ignored")
        meta = ConnectMetadata()
    token = value if isinstance(value, str) else ""
    return TokenForm(payload.user_id, token, payload.view.id, meta)


@dataclass(frozen=True)
class ParkedChoice:
    """ "Send it" / "Open the form" / "Discard" on the offer of a click made before
    connecting: who, the item the offer names ("" when its value is not ours), where the
    offer is (its response_url replaces it) and Slack's trigger (to open a form)."""

    user_id: str
    pending_id: str
    where: Where
    trigger_id: str
    response_url: str


def parked_choice(body: Any) -> ParkedChoice | None:
    try:
        payload = parse(BlockAction, body)
    except PayloadError as exc:
        log.warning("refused a malformed offer button: %s", exc)
        return None
    try:
        pending_id = parse_parked_value(payload.action.value).pending_id
    except CodecError:
        log.warning(
            "an offer button's value is not ours: %s", raw_payload.quote(payload.action.value, 60)
        )
        pending_id = ""
    where = Where(payload.user_id, payload.channel_id or None, payload.response_url or None)
    return ParkedChoice(
        payload.user_id, pending_id, where, payload.trigger_id, payload.response_url
    )
