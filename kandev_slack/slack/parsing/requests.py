"""Slack payloads -> admission requests (kandev_slack/usecases/answering/admission.py). Parsing
only: no decisions.

Each function reads one kind of interaction payload into the
:class:`~kandev_slack.usecases.answering.admission.Request` it describes, or an :class:`Unusable`
when the
payload cannot describe one (it lacks what Slack always sends, or carries a value this app
never made); the admission step audits and words the
refusal either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kandev_slack.cards.ids import (
    ACTION_MORE,
    BLOCK_DIGEST,
    CodecError,
    ModalMetadata,
    parse_answer_all_value,
    parse_button_value,
    parse_modal_metadata,
    parse_more_value,
    parse_skip_confirm_value,
    parse_snooze_value,
)
from kandev_slack.cards.wording import Action
from kandev_slack.slack.parsing import raw_payload
from kandev_slack.slack.parsing.payloads import (
    BlockAction,
    MessageShortcut,
    PayloadError,
    ViewSubmission,
    parse,
)
from kandev_slack.usecases.answering.admission import RefusalKind, Request, Unusable, Via, Where
from kandev_slack.usecases.answering.thread_replies import (
    DirectMessage,
    MessageKind,
    ReplyDeleted,
    ReplyEdited,
    ThreadMessage,
)

__all__ = ["Form", "Interaction", "click", "form", "shortcut", "snooze_choice", "unknown"]


@dataclass(frozen=True)
class Interaction:
    """A click or a shortcut: the request, where to tell the person, and what Slack gave to
    answer it (a trigger to open a form, a response_url). ``in_modal``: clicked in one of the
    app's modals (a form then goes on top of it)."""

    request: Request
    where: Where
    trigger_id: str
    response_url: str
    in_modal: bool = False
    view_id: str = ""  # the modal clicked in (``in_modal``), which the reply may update


@dataclass(frozen=True)
class Form:
    request: Request
    where: Where
    meta: ModalMetadata
    values: dict[str, dict[str, dict[str, Any]]]
    view_id: str = ""  # the submitted view, which ``views.update`` may change afterwards
    metadata: str = ""  # its private_metadata, as submitted


def where_of(body: Any) -> Where:
    """Whom to tell about a payload too broken to parse (best effort)."""
    return Where(
        raw_payload.user_of(body),
        raw_payload.channel_of(body) or None,
        raw_payload.response_url_of(body) or None,
    )


def unknown(
    body: Any, kind: RefusalKind, source: str, detail: str, *, pending_id: str | None = None
) -> Unusable:
    """An action, form or shortcut this app does not handle (an old card's button…)."""
    return Unusable(kind, raw_payload.quote(detail), kind, source, where_of(body), pending_id)


def retry_num(headers: Mapping[str, str | Sequence[str]]) -> int:
    """Slack's retry count of a delivery (X-Slack-Retry-Num; Socket Mode's retry_attempt)."""
    value = headers.get("x-slack-retry-num") or ""
    first = value if isinstance(value, str) else (value[0] if value else "")
    return int(first) if first.isdigit() else 0


def click(
    body: Any, action: Action, *, option: bool = False, retries: int = 0
) -> Interaction | Unusable:
    """A button click: on a card message, on the listing (ephemeral) or on the App Home;
    ``retries``: Slack's retry count of this delivery (see :func:`retry_num`)."""
    parsed = _click(body, action, option=option)
    if retries >= 1 and isinstance(parsed, Interaction):
        return replace(parsed, request=replace(parsed.request, redelivery=True))
    return parsed


def _click(body: Any, action: Action, *, option: bool) -> Interaction | Unusable:
    source = "slack:button"
    try:
        payload = parse(BlockAction, body)
    except PayloadError as exc:
        return Unusable("malformed", str(exc), action, source, where_of(body))
    where = Where(payload.user_id, payload.channel_id or None, payload.response_url or None)
    container = payload.container
    place = f"{payload.channel_id}/{container.message_ts or container.view_id}"
    if payload.action.action_id == ACTION_MORE:
        return _more_clicked(payload, action, where, place)
    detail = f"value {raw_payload.quote(payload.action.value, 60)} at {place}"
    try:
        value = parse_button_value(payload.action.value)
    except CodecError:
        return Unusable("tampered", detail, action, source, where)
    if payload.in_modal:
        chosen = (value.question_id, value.option_id) if option else None
        return _in_modal(payload, value.pending_id, action, detail, chosen)
    request = _clicked(
        payload,
        action=action,
        source=source,
        pending_id=value.pending_id,
        option=(value.question_id, value.option_id) if option else None,
        detail=detail,
    )
    return Interaction(request, where, payload.trigger_id, payload.response_url)


def more_choice(body: Any) -> str:
    """What the option chosen in a card's "More" overflow asks for ("claim", "release",
    "skip", "reject", "conversation"), or "" when it is not an option this app made."""
    try:
        payload = parse(BlockAction, body)
        chosen = payload.action.selected_option
        return parse_more_value(chosen.value if chosen is not None else "").choice
    except (PayloadError, CodecError):
        return ""


def _more_clicked(
    payload: BlockAction, action: Action, where: Where, place: str
) -> Interaction | Unusable:
    """An option of a card's "More" overflow: its value names the item, as a button's does."""
    source = "slack:overflow"
    chosen = payload.action.selected_option
    raw = chosen.value if chosen is not None else ""
    detail = f"option {raw_payload.quote(raw, 60)} at {place}"
    try:
        value = parse_more_value(raw)
    except CodecError:
        return Unusable("tampered", detail, action, source, where)
    request = _clicked(
        payload, action=action, source=source, pending_id=value.pending_id, detail=detail
    )
    return Interaction(request, where, payload.trigger_id, payload.response_url)


def skip_confirmed(body: Any, *, retries: int = 0) -> Interaction | Unusable:
    """ "Skip it" on the confirm of Skip… (an ephemeral message): its value names the item
    and the card it was asked on, so the request is the card's, as the old Skip button's."""
    source = "slack:skip-confirm"
    action: Action = "reject"
    try:
        payload = parse(BlockAction, body)
    except PayloadError as exc:
        return Unusable("malformed", str(exc), action, source, where_of(body))
    where = Where(payload.user_id, payload.channel_id or None, payload.response_url or None)
    detail = f"value {raw_payload.quote(payload.action.value, 60)} in {payload.channel_id}"
    try:
        value = parse_skip_confirm_value(payload.action.value)
    except CodecError:
        return Unusable("tampered", detail, action, source, where)
    on_card = bool(value.channel and value.ts)
    request = Request(
        user_id=payload.user_id,
        user_team=payload.user_team,
        via="card" if on_card else "list",
        channel=value.channel or None,
        ts=value.ts or None,
        action=action,
        source=source,
        pending_id=value.pending_id,
        detail=detail,
        redelivery=retries >= 1,
    )
    return Interaction(request, where, payload.trigger_id, payload.response_url)


def _clicked(
    payload: BlockAction,
    *,
    action: Action,
    source: str,
    pending_id: str,
    detail: str,
    option: tuple[str, str] | None = None,
    redelivery: bool = False,
    hours: int = 0,
    group: bool = False,
) -> Request:
    """The request of a control in a message (a card: its channel and ts), the App Home or a
    listing (an ephemeral: no message to name)."""
    container = payload.container
    via: Via = "card" if payload.on_message else "home" if container.type == "view" else "list"
    if via == "card" and payload.action.block_id.startswith(BLOCK_DIGEST):
        via = "list"  # a digest's item: not a card, named by its button's value as a listing's
    return Request(
        user_id=payload.user_id,
        user_team=payload.user_team,
        via=via,
        channel=(payload.channel_id or None) if via == "card" else None,
        ts=(container.message_ts or None) if via == "card" else None,
        action=action,
        source=source,
        pending_id=pending_id,
        option=option,
        detail=detail,
        redelivery=redelivery,
        hours=hours,
        group=group,
    )


def snooze_choice(body: Any, *, retries: int = 0) -> Interaction | Unusable:
    """A "Snooze…" option chosen (a static_select on a DM card or a Home item): its value
    names the item and the length, tamper-checked like a button's."""
    source = "slack:select"
    action: Action = "snooze"
    try:
        payload = parse(BlockAction, body)
    except PayloadError as exc:
        return Unusable("malformed", str(exc), action, source, where_of(body))
    where = Where(payload.user_id, payload.channel_id or None, payload.response_url or None)
    chosen = payload.action.selected_option
    raw = chosen.value if chosen is not None else ""
    container = payload.container
    place = f"{payload.channel_id}/{container.message_ts or container.view_id}"
    detail = f"option {raw_payload.quote(raw, 60)} at {place}"
    try:
        value = parse_snooze_value(raw)
    except CodecError:
        return Unusable("tampered", detail, action, source, where)
    request = _clicked(
        payload,
        action=action,
        source=source,
        pending_id=value.pending_id,
        detail=detail,
        redelivery=retries >= 1,
        hours=value.hours,
        group=value.group,
    )
    return Interaction(request, where, payload.trigger_id, payload.response_url)


def offer_click(body: Any) -> tuple[str, Where, str]:
    """A button of an ephemeral offer (Send to all / No thanks): the bundle its value names
    ("" when it is not a value this app made), where the person is, and what the audit of a
    refusal records about it."""
    where = where_of(body)
    actions = body.get("actions") if isinstance(body, dict) else None
    first = actions[0] if isinstance(actions, list) and actions else {}
    raw = first.get("value") if isinstance(first, dict) else None
    detail = f"value {raw_payload.quote(raw, 60)} in {where.channel or '?'}"
    try:
        return parse_answer_all_value(raw).pending_id, where, detail
    except CodecError:
        pass
    try:
        return parse_button_value(raw).pending_id, where, detail
    except CodecError:
        return "", where, detail


def offer_members(body: Any) -> tuple[str, ...] | None:
    """The bundles an offer's Send names (None: a value that names none, from an offer made
    before it did; or not this app's)."""
    actions = body.get("actions") if isinstance(body, dict) else None
    first = actions[0] if isinstance(actions, list) and actions else {}
    raw = first.get("value") if isinstance(first, dict) else None
    try:
        return parse_answer_all_value(raw).members
    except CodecError:
        return None


def _in_modal(
    payload: BlockAction,
    pending_id: str,
    action: Action,
    detail: str,
    option: tuple[str, str] | None = None,
) -> Interaction | Unusable:
    """A button in one of the app's modals: the modal's metadata names the card it is about
    (and where it was opened from), as a submitted form's does; ``option``: the option an
    option button names (an approval's full view carries its options)."""
    source = "slack:modal-button"
    view = payload.view
    raw = view.private_metadata if view is not None else ""
    try:
        meta = parse_modal_metadata(raw)
    except CodecError:
        where = Where(payload.user_id, None, None)
        return Unusable("tampered", detail, action, source, where)
    on_card = meta.origin in ("card", "shortcut") and bool(meta.ts)
    where = Where(payload.user_id, meta.channel if on_card else None, meta.response_url or None)
    if meta.pending_id != pending_id:
        return Unusable("tampered", detail, action, source, where, meta.pending_id)
    request = Request(
        user_id=payload.user_id,
        user_team=payload.user_team,
        action=action,
        source=source,
        via=meta.origin,
        pending_id=pending_id,
        channel=meta.channel or None,
        ts=meta.ts or None,
        option=option,
        form=True,
        detail=detail,
    )
    view_id = view.id if view is not None else ""
    return Interaction(
        request, where, payload.trigger_id, meta.response_url, in_modal=True, view_id=view_id
    )


def form(body: Any, action: Action) -> Form | Unusable:
    """A modal submission: the form's metadata names the bundle and the card it came from."""
    try:
        payload = parse(ViewSubmission, body)
        meta = parse_modal_metadata(payload.view.private_metadata)
    except (PayloadError, CodecError) as exc:
        return Unusable("malformed", str(exc), action, "slack:modal", where_of(body))
    # A form opened from a card tells the person in the card's channel; one opened from the
    # listing through its response_url; one opened from the App Home in the form or on Home.
    on_card = meta.origin in ("card", "shortcut") and bool(meta.ts)
    where = Where(payload.user_id, meta.channel if on_card else None, meta.response_url or None)
    request = Request(
        user_id=payload.user_id,
        user_team=payload.user_team,
        action=action,
        source=f"slack:modal:{meta.origin}",
        via=meta.origin,
        pending_id=meta.pending_id,
        channel=meta.channel or None,
        ts=meta.ts or None,
        form=True,
        detail=f"metadata {meta.channel}/{meta.ts}",
    )
    view = payload.view
    return Form(request, where, meta, view.values, view.id, view.private_metadata)


def shortcut(body: Any) -> Interaction | Unusable:
    """The "Reject agent question" message shortcut: the message is the card, if any."""
    try:
        payload = parse(MessageShortcut, body)
    except PayloadError as exc:
        return Unusable("malformed", str(exc), "reject", "slack:shortcut", where_of(body))
    channel = payload.channel.id or None
    where = Where(payload.user_id, channel, payload.response_url or None)
    request = Request(
        user_id=payload.user_id,
        user_team=payload.user_team,
        action="reject",
        source="slack:shortcut",
        via="shortcut",
        channel=channel,
        ts=payload.message.ts,
        detail="not opened",
    )
    return Interaction(request, where, payload.trigger_id, payload.response_url)


#: Message subtypes that are a person's own new message (a reply also sent to the channel; one
#: sharing a file; a ``/me`` message), and what kind of reply each is.
_HUMAN_SUBTYPES: dict[str, MessageKind] = {
    "": "text",
    "thread_broadcast": "text",
    "file_share": "file",
    "me_message": "me",
}


def thread_message(event: Any, *, bot_user_id: str | None = None) -> ThreadMessage | None:
    """A person's new reply in a thread, from a ``message`` event (None: anything else — a
    bot's message, an edit or deletion, a join, a message outside a thread, the thread's
    parent)."""
    if not isinstance(event, dict) or event.get("type") != "message":
        return None
    if event.get("bot_id") or event.get("bot_profile") or event.get("edited"):
        return None
    kind = _HUMAN_SUBTYPES.get(event.get("subtype") or "")
    if kind is None:
        return None
    if event.get("files"):
        kind = "file"
    fields = [event.get(k) for k in ("channel", "thread_ts", "ts", "user")]
    if not all(isinstance(f, str) and f for f in fields):
        return None
    channel, thread_ts, ts, user = (str(f) for f in fields)
    text = event.get("text")
    if thread_ts == ts or not isinstance(text, str):
        return None
    parent = event.get("parent_user_id")
    on_app = bool(bot_user_id) and parent == bot_user_id
    return ThreadMessage(channel, thread_ts, ts, user, text, on_app_message=on_app, kind=kind)


def message_change(event: Any) -> ReplyEdited | ReplyDeleted | None:
    """A person's message edited (``message_changed``: ``message`` is the message now) or
    deleted (``message_deleted``: ``deleted_ts`` names it); None for anything else."""
    if not isinstance(event, dict) or event.get("type") != "message":
        return None
    channel = event.get("channel")
    if not isinstance(channel, str) or not channel:
        return None
    subtype = event.get("subtype")
    if subtype == "message_deleted":
        ts = event.get("deleted_ts")
        return ReplyDeleted(channel, ts) if isinstance(ts, str) and ts else None
    if subtype != "message_changed":
        return None
    message = event.get("message")
    if not isinstance(message, dict) or message.get("bot_id"):
        return None
    fields = [message.get(k) for k in ("thread_ts", "ts", "user", "text")]
    if not all(isinstance(f, str) for f in fields) or not all(fields[:3]):
        return None
    thread_ts, ts, user, text = (str(f) for f in fields)
    if thread_ts == ts:
        return None  # the thread's parent (e.g. its reply count changed)
    return ReplyEdited(channel, thread_ts, ts, user, text)


def direct_message(event: Any) -> DirectMessage | None:
    """A person's own message to the app in its Messages tab (``channel_type`` im, not in a
    thread, not a bot's); None for anything else."""
    if not isinstance(event, dict) or event.get("type") != "message":
        return None
    if event.get("channel_type") != "im" or event.get("bot_id") or event.get("bot_profile"):
        return None
    if (event.get("subtype") or "") not in _HUMAN_SUBTYPES:
        return None
    fields = [event.get(k) for k in ("channel", "user", "ts")]
    if not all(isinstance(f, str) and f for f in fields):
        return None
    channel, user, ts = (str(f) for f in fields)
    if event.get("thread_ts") not in (None, ts):
        return None
    return DirectMessage(channel, user, ts)


def modal_of(parsed: Interaction | Unusable) -> str:
    """The id of the modal a click was made in ("" when not in one)."""
    return parsed.view_id if isinstance(parsed, Interaction) and parsed.in_modal else ""
