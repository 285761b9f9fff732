"""SlackDriver: acts as Slack toward the bot — a person clicking, submitting, typing commands —
building real payloads from what the fake recorded (messages, modals, Home tabs)."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from kandev_slack.kits.fakeslack import payloads
from kandev_slack.kits.fakeslack.api.view_state import build_state_values, merged_entries
from kandev_slack.kits.fakeslack.config import ALICE, SlackUser, Workspace
from kandev_slack.kits.fakeslack.layout import ElementRef, find_element, iter_elements
from kandev_slack.kits.fakeslack.records import Ephemeral, PostedMessage, ViewRecord
from kandev_slack.kits.fakeslack.transport.server import FakeSlack
from kandev_slack.kits.fakeslack.transport.transports import (
    Ack,
    Delivery,
    HttpTransport,
    Kind,
    SocketModeTransport,
    Transport,
)

JsonDict = dict[str, Any]
UserLike = SlackUser | str | None
BUTTONS = frozenset({"button"})
CHOOSERS = frozenset(
    {"static_select", "radio_buttons", "overflow", "checkboxes", "multi_static_select"}
)


class SlackDriver:
    def __init__(
        self,
        fake: FakeSlack,
        transport: Transport,
        *,
        user: SlackUser = ALICE,
        delivery: Delivery | None = None,
    ) -> None:
        self.fake = fake
        self.transport = transport
        self.default_user = user
        self.delivery = delivery or Delivery()

    @classmethod
    def over_http(
        cls, fake: FakeSlack, url: str, signing_secret: str | None = None, **kwargs: Any
    ) -> SlackDriver:
        """Drive a bot whose Slack request URL (e.g. http://127.0.0.1:P/slack/events) is `url`."""
        secret = signing_secret or fake.workspace.signing_secret
        return cls(fake, HttpTransport(url, secret), **kwargs)

    @classmethod
    def over_socket_mode(cls, fake: FakeSlack, **kwargs: Any) -> SlackDriver:
        """Drive a bot connected to the fake's Socket Mode server."""
        return cls(fake, SocketModeTransport(fake.socket), **kwargs)

    # -- plumbing -----------------------------------------------------------------------------
    @property
    def ws(self) -> Workspace:
        return self.fake.workspace

    def user(self, user: UserLike = None) -> SlackUser:
        """The acting person (registered in the fake workspace if new)."""
        if user is None:
            user = self.default_user
        if isinstance(user, str):
            known = self.ws.users.get(user)
            user = known or SlackUser(id=user, name=user.lower())
        if user.id not in self.ws.users:
            self.fake.add_user(user)
        return user

    def _deliver(
        self, kind: Kind, payload: JsonDict, accepts: bool, delivery: Delivery | None
    ) -> Ack:
        return self.transport.deliver(
            kind, payload, accepts_response_payload=accepts, delivery=delivery or self.delivery
        )

    def _current_view(self, view: ViewRecord | str) -> ViewRecord:
        return self.fake.view(view if isinstance(view, str) else view.id)

    def _seen_message(self, channel: str, ts: str, version: int | None) -> PostedMessage:
        message = self._live_message(channel, ts)
        if version is None or not 0 <= version < len(message.versions):
            return message
        seen = message.versions[version]
        return dataclasses.replace(
            message, text=str(seen.get("text", "")), blocks=list(seen.get("blocks") or [])
        )

    def _live_message(self, channel: str, ts: str) -> PostedMessage:
        message = self.fake.message(self.fake.ctx.resolve_channel(channel), ts)
        if message.deleted:
            raise LookupError(f"message {ts} in {channel} was deleted")
        return message

    # -- messages -----------------------------------------------------------------------------
    def click(
        self,
        channel: str,
        ts: str,
        *,
        action_id: str | None = None,
        value: str | None = None,
        text: str | None = None,
        block_id: str | None = None,
        user: UserLike = None,
        delivery: Delivery | None = None,
        seen_version: int | None = None,
    ) -> Ack:
        """Click the button of a posted message found by action_id / value / visible text.
        ``seen_version``: click the message as the person still sees it, that many edits old
        (``len(message.versions)`` when they looked; a click on a card edited since)."""
        message = self._seen_message(channel, ts, seen_version)
        ref = find_element(
            message.blocks,
            action_id=action_id,
            value=value,
            text=text,
            block_id=block_id,
            types=BUTTONS,
        )
        return self._act_on_message(message, ref, None, user, delivery)

    def choose(
        self,
        channel: str,
        ts: str,
        *,
        text: str,
        user: UserLike = None,
        delivery: Delivery | None = None,
        seen_version: int | None = None,
    ) -> Ack:
        """Open a message's overflow menu and pick the option labelled ``text`` (the one such
        option among the message's overflows): Slack sends ``block_actions`` with ``type:
        overflow`` and the chosen ``selected_option``."""
        message = self._seen_message(channel, ts, seen_version)
        ref, value = overflow_option(message.blocks, text)
        return self._act_on_message(message, ref, value, user, delivery)

    def select(
        self,
        channel: str,
        ts: str,
        *,
        action_id: str,
        option: str | list[str],
        block_id: str | None = None,
        user: UserLike = None,
        delivery: Delivery | None = None,
    ) -> Ack:
        """Choose option value(s) in a select / radio / overflow / checkboxes of a message."""
        message = self._live_message(channel, ts)
        ref = find_element(message.blocks, action_id=action_id, block_id=block_id, types=CHOOSERS)
        return self._act_on_message(message, ref, option, user, delivery)

    def _act_on_message(
        self,
        message: PostedMessage,
        ref: ElementRef,
        selected: str | list[str] | None,
        user: UserLike,
        delivery: Delivery | None,
    ) -> Ack:
        person = self.user(user)
        payload = payloads.block_actions(
            self.ws,
            person,
            container={
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": False,
            },
            actions=[payloads.action_item(ref, selected)],
            trigger_id=self.fake.issue_trigger(person.id),
            response_url=self.fake.issue_response_url(message.channel, person.id, message.ts),
            channel=self.ws.channels[message.channel],
            message=message.to_slack(include_metadata=False),
            state_values=build_state_values(message.blocks, None, enforce_client_rules=False),
        )
        return self._deliver("interactive", payload, False, delivery)

    def click_ephemeral(
        self,
        ephemeral: Ephemeral,
        *,
        action_id: str | None = None,
        value: str | None = None,
        text: str | None = None,
        delivery: Delivery | None = None,
    ) -> Ack:
        """Click a button in an ephemeral message (only its recipient can)."""
        ref = find_element(
            ephemeral.blocks, action_id=action_id, value=value, text=text, types=BUTTONS
        )
        person = self.user(ephemeral.user)
        payload = payloads.block_actions(
            self.ws,
            person,
            container={
                "type": "message",
                "message_ts": ephemeral.message_ts,
                "channel_id": ephemeral.channel,
                "is_ephemeral": True,
            },
            actions=[payloads.action_item(ref)],
            trigger_id=self.fake.issue_trigger(person.id),
            response_url=self.fake.issue_response_url(
                ephemeral.channel, person.id, ephemeral.message_ts, is_ephemeral=True
            ),
            channel=self.ws.channels[ephemeral.channel],
            state_values=build_state_values(ephemeral.blocks, None, enforce_client_rules=False),
        )
        return self._deliver("interactive", payload, False, delivery)

    def select_ephemeral(
        self,
        ephemeral: Ephemeral,
        *,
        action_id: str,
        option: str,
        delivery: Delivery | None = None,
    ) -> Ack:
        """Choose the option valued ``option`` in a select of an ephemeral message (the one
        select with that ``action_id`` offering it: a listing has one per row), as only its
        recipient can: Slack sends ``block_actions`` with the chosen ``selected_option``, an
        ephemeral container and no ``message``."""
        ref = chooser_offering(ephemeral.blocks, action_id, option)
        person = self.user(ephemeral.user)
        chosen = {ref.block_id: {ref.action_id: option}} if ref.block_id else None
        payload = payloads.block_actions(
            self.ws,
            person,
            container={
                "type": "message",
                "message_ts": ephemeral.message_ts,
                "channel_id": ephemeral.channel,
                "is_ephemeral": True,
            },
            actions=[payloads.action_item(ref, option)],
            trigger_id=self.fake.issue_trigger(person.id),
            response_url=self.fake.issue_response_url(
                ephemeral.channel, person.id, ephemeral.message_ts, is_ephemeral=True
            ),
            channel=self.ws.channels[ephemeral.channel],
            state_values=build_state_values(ephemeral.blocks, chosen, enforce_client_rules=False),
        )
        return self._deliver("interactive", payload, False, delivery)

    def message_shortcut(
        self,
        callback_id: str,
        channel: str,
        message_ts: str,
        *,
        user: UserLike = None,
        delivery: Delivery | None = None,
    ) -> Ack:
        person = self.user(user)
        message = self._live_message(channel, message_ts)
        payload = payloads.message_shortcut(
            self.ws,
            person,
            self.ws.channels[message.channel],
            callback_id=callback_id,
            message=message.to_slack(include_metadata=False),
            trigger_id=self.fake.issue_trigger(person.id),
            response_url=self.fake.issue_response_url(message.channel, person.id),
        )
        return self._deliver("interactive", payload, False, delivery)

    def global_shortcut(
        self, callback_id: str, *, user: UserLike = None, delivery: Delivery | None = None
    ) -> Ack:
        person = self.user(user)
        payload = payloads.global_shortcut(
            self.ws, person, callback_id=callback_id, trigger_id=self.fake.issue_trigger(person.id)
        )
        return self._deliver("interactive", payload, False, delivery)

    # -- modals and Home ----------------------------------------------------------------------
    def submit_view(
        self,
        view: ViewRecord | str,
        values: dict[str, dict[str, Any]] | None = None,
        *,
        user: UserLike = None,
        enforce_client_rules: bool = True,
        delivery: Delivery | None = None,
    ) -> Ack:
        """Submit an open modal with `values` ({block_id: {action_id: value}}; see
        view_state.to_state for the accepted value shapes). The bot's response_action is then
        applied to the fake's view stack (errors keep it open, update/push/clear, else close)."""
        record = self._current_view(view)
        if not record.is_open:
            raise RuntimeError(f"view {record.id} is not open any more")
        person = self.user(user or record.user)
        values = merged_entries(record.entered, values)  # what was picked before, kept
        state = build_state_values(record.blocks, values, enforce_client_rules=enforce_client_rules)
        payload = payloads.view_submission(
            self.ws, person, record.to_slack(state), self.fake.issue_trigger(person.id)
        )
        with self.fake.view_flow.submitting(record.id):
            ack = self._deliver("interactive", payload, True, delivery)
            if ack.ok:
                self.fake.view_flow.apply_submission_answer(record.id, ack.json)
        return ack

    def close_view(
        self, view: ViewRecord | str, *, user: UserLike = None, delivery: Delivery | None = None
    ) -> Ack | None:
        """Press Cancel: the modal closes; the bot hears of it only with notify_on_close."""
        record = self._current_view(view)
        self.fake.view_flow.close(record.id)
        if not record.notify_on_close:
            return None
        person = self.user(user or record.user)
        state = build_state_values(record.blocks, None, enforce_client_rules=False)
        payload = payloads.view_closed(self.ws, person, record.to_slack(state), is_cleared=False)
        return self._deliver("interactive", payload, False, delivery)

    def click_in_view(
        self,
        view: ViewRecord | str,
        *,
        action_id: str | None = None,
        value: str | None = None,
        text: str | None = None,
        user: UserLike = None,
        delivery: Delivery | None = None,
        as_shown: bool = False,
    ) -> Ack:
        """Click a button inside a modal or a Home tab. ``as_shown``: click ``view`` as the
        person still sees it, although it was replaced since (a click racing a refresh)."""
        record = view if as_shown and isinstance(view, ViewRecord) else self._current_view(view)
        ref = find_element(
            record.blocks, action_id=action_id, value=value, text=text, types=BUTTONS
        )
        person = self.user(user or record.user)
        return self._act_in_view(record, ref, None, person, None, delivery)

    def select_in_view(
        self,
        view: ViewRecord | str,
        *,
        action_id: str,
        option: str,
        user: UserLike = None,
        delivery: Delivery | None = None,
        as_shown: bool = False,
    ) -> Ack:
        """Choose the option valued ``option`` in a select of a modal or a Home tab (the one
        select with that ``action_id`` offering it: a Home tab has one per item). Slack sends
        ``block_actions`` with the chosen ``selected_option`` and the view's state holding it.
        (An input's select or radio group: :meth:`pick_in_form`.)
        ``as_shown``: in ``view`` as the person still sees it, although it was replaced since."""
        record = view if as_shown and isinstance(view, ViewRecord) else self._current_view(view)
        ref = chooser_offering(record.blocks, action_id, option)
        person = self.user(user or record.user)
        if ref.block.get("type") == "input":
            raise ValueError(f"{action_id!r} is a form's input: pick it with pick_in_form")
        chosen = {ref.block_id: {ref.action_id: option}} if ref.block_id else None
        return self._act_in_view(record, ref, option, person, chosen, delivery)

    def pick_in_form(
        self,
        view: ViewRecord | str,
        *,
        block_id: str,
        option: str,
        user: UserLike = None,
        delivery: Delivery | None = None,
    ) -> Ack | None:
        """Pick the option valued ``option`` in the input ``block_id`` of an open modal
        (radio buttons, a select). Slack's client keeps the pick (it is in ``view.state``
        from then on, and in the submission); it tells the app at once — ``block_actions``
        with the view's state — only when the input block has ``dispatch_action``, else
        nothing is sent (None)."""
        record = self._current_view(view)
        if not record.is_open:
            raise RuntimeError(f"view {record.id} is not open any more")
        ref = next((r for r in iter_elements(record.blocks) if r.block_id == block_id), None)
        if ref is None or ref.block.get("type") != "input" or ref.type not in CHOOSERS:
            raise LookupError(f"no input {block_id!r} with options in the view")
        if not any(o.get("value") == option for o in _options(ref.element)):
            raise LookupError(f"the input {block_id!r} offers no option {option!r}")
        record = self.fake.enter_in_view(record.id, {block_id: {ref.action_id: option}})
        if not ref.block.get("dispatch_action"):
            return None
        person = self.user(user or record.user)
        return self._act_in_view(record, ref, option, person, record.entered, delivery)

    def _act_in_view(
        self,
        record: ViewRecord,
        ref: ElementRef,
        option: str | None,
        person: SlackUser,
        entered: Any,
        delivery: Delivery | None,
    ) -> Ack:
        """Slack's ``block_actions`` for an element of a view (a button, or a chooser's
        ``option``), with the view's state holding ``entered``, delivered."""
        state = build_state_values(record.blocks, entered, enforce_client_rules=False)
        payload = payloads.block_actions(
            self.ws,
            person,
            container={"type": "view", "view_id": record.id},
            actions=[payloads.action_item(ref, option)],
            trigger_id=self.fake.issue_trigger(person.id),
            response_url=None,
            view=record.to_slack(state),
        )
        return self._deliver("interactive", payload, False, delivery)

    def home_of(self, user: UserLike = None) -> ViewRecord | None:
        return self.fake.home(self.user(user).id)

    def app_home_opened(self, user: UserLike = None, *, delivery: Delivery | None = None) -> Ack:
        person = self.user(user)
        home = self.fake.home(person.id)
        dm_channel = self.fake.ctx.resolve_channel(person.id)
        event = payloads.app_home_opened(person, dm_channel, home.to_slack() if home else None)
        return self.send_event(event, delivery=delivery)

    # -- commands and events ------------------------------------------------------------------
    def slash(
        self,
        command: str,
        text: str = "",
        *,
        user: UserLike = None,
        channel: str | None = None,
        delivery: Delivery | None = None,
    ) -> Ack:
        """Run a slash command; a non-empty ack body is shown like Slack does (ephemeral
        by default, in_channel if the bot says so)."""
        person = self.user(user)
        channel_id = self.fake.ctx.resolve_channel(channel or next(iter(self.ws.channels)))
        response_url = self.fake.issue_response_url(channel_id, person.id)
        payload = payloads.slash_command(
            self.ws,
            person,
            self.ws.channels[channel_id],
            command=command,
            text=text,
            trigger_id=self.fake.issue_trigger(person.id),
            response_url=response_url,
        )
        ack = self._deliver("slash_commands", payload, True, delivery)
        if ack.ok:
            body = {"text": ack.body} if isinstance(ack.body, str) else ack.json
            self.fake.apply_command_ack(response_url, body)
        return ack

    def url_verification(self, challenge: str = "fake-challenge") -> Ack:
        """The handshake Slack sends when an HTTP request URL is saved."""
        payload = {
            "token": self.ws.verification_token,
            "challenge": challenge,
            "type": "url_verification",
        }
        return self._deliver("events_api", payload, False, None)

    def reply_in_thread(
        self,
        channel: str,
        thread_ts: str,
        text: str,
        *,
        user: UserLike = None,
        delivery: Delivery | None = None,
        event: JsonDict | None = None,
    ) -> tuple[Ack, JsonDict]:
        """A person replies in the thread of the message at ``thread_ts``: the ``message``
        event Slack sends for it (``channel_type`` channel, group or im; a ``client_msg_id``),
        and the whole event callback, to deliver again as a redelivery (``redeliver``).
        ``event``: fields to set or override (``subtype``, ``bot_id``, ``edited``…)."""
        person = self.user(user)
        known = self.ws.channels.get(channel)
        kind = "im" if known is not None and known.is_im else "channel"
        if known is not None and known.is_private and not known.is_im:
            kind = "group"
        ts = self.fake.ctx.clock.next(channel)
        message: JsonDict = {
            "type": "message",
            "channel": channel,
            "user": person.id,
            "text": text,
            "ts": ts,
            "thread_ts": thread_ts,
            "parent_user_id": self.ws.bot_user_id,
            "client_msg_id": str(uuid.uuid4()),
            "team": self.ws.team_id,
            "event_ts": ts,
            "channel_type": kind,
            "blocks": [],
        }
        if person.team_id:  # a Slack Connect member of a shared channel: their organisation
            message["user_team"] = message["source_team"] = person.team_id
        message.update(event or {})
        callback = payloads.event_callback(self.ws, message)
        return self._deliver("events_api", callback, False, delivery), callback

    def share_file_in_thread(
        self,
        channel: str,
        thread_ts: str,
        text: str = "",
        *,
        name: str = "screenshot.png",
        user: UserLike = None,
    ) -> tuple[Ack, JsonDict]:
        """A person replies in a thread with a file (and ``text`` as its comment): the
        ``message`` event of subtype ``file_share`` with its ``files``."""
        person = self.user(user)
        file = {
            "id": "F" + uuid.uuid4().hex[:10].upper(),
            "created": int(float(thread_ts)),
            "name": name,
            "title": name,
            "mimetype": "image/png",
            "filetype": name.rsplit(".", 1)[-1],
            "user": person.id,
            "size": 1024,
            "mode": "hosted",
            "is_external": False,
            "is_public": True,
        }
        extra = {"subtype": "file_share", "files": [file], "upload": True, "display_as_bot": False}
        return self.reply_in_thread(channel, thread_ts, text, user=person, event=extra)

    def me_in_thread(
        self, channel: str, thread_ts: str, text: str, *, user: UserLike = None
    ) -> tuple[Ack, JsonDict]:
        """A person's ``/me`` message in a thread (subtype ``me_message``; ``text`` without
        the person's name, as Slack sends it)."""
        return self.reply_in_thread(
            channel, thread_ts, text, user=user, event={"subtype": "me_message"}
        )

    def edit_message(
        self, sent: JsonDict, text: str, *, delivery: Delivery | None = None
    ) -> tuple[Ack, JsonDict]:
        """Its author edits a message ``sent`` (the event callback, or the event, of a
        person's message): the ``message_changed`` event Slack sends, ``message`` as it is now
        and ``previous_message`` as it was."""
        before = _event_of(sent)
        channel = str(before["channel"])
        now_ts = self.fake.ctx.clock.next(channel)
        inner = {
            k: v
            for k, v in before.items()
            if k not in ("channel", "event_ts", "channel_type", "subtype")
        }
        message = {**inner, "text": text, "edited": {"user": before["user"], "ts": now_ts}}
        event: JsonDict = {
            "type": "message",
            "subtype": "message_changed",
            "message": message,
            "previous_message": inner,
            "channel": channel,
            "hidden": True,
            "ts": now_ts,
            "event_ts": now_ts,
            "channel_type": before.get("channel_type", "channel"),
        }
        callback = payloads.event_callback(self.ws, event)
        # The next edit starts from this one.
        edited = {**before, "text": text, "edited": message["edited"]}
        return self._deliver("events_api", callback, False, delivery), edited

    def delete_message(self, sent: JsonDict, *, delivery: Delivery | None = None) -> Ack:
        """Its author deletes a message ``sent``: the ``message_deleted`` event Slack sends
        (``deleted_ts`` names it, ``previous_message`` is what it was)."""
        before = _event_of(sent)
        channel = str(before["channel"])
        now_ts = self.fake.ctx.clock.next(channel)
        previous = {
            k: v
            for k, v in before.items()
            if k not in ("channel", "event_ts", "channel_type", "subtype")
        }
        event: JsonDict = {
            "type": "message",
            "subtype": "message_deleted",
            "hidden": True,
            "channel": channel,
            "ts": now_ts,
            "deleted_ts": before["ts"],
            "event_ts": now_ts,
            "previous_message": previous,
            "channel_type": before.get("channel_type", "channel"),
        }
        return self.send_event(event, delivery=delivery)

    def message_app(
        self, text: str, *, user: UserLike = None, delivery: Delivery | None = None
    ) -> tuple[Ack, JsonDict]:
        """A person writes to the app in its Messages tab (their DM with the bot): the
        ``message.im`` event (``channel_type`` im, no thread)."""
        person = self.user(user)
        channel = self.fake.ctx.resolve_channel(person.id)
        ts = self.fake.ctx.clock.next(channel)
        event: JsonDict = {
            "type": "message",
            "channel": channel,
            "user": person.id,
            "text": text,
            "ts": ts,
            "client_msg_id": str(uuid.uuid4()),
            "team": self.ws.team_id,
            "event_ts": ts,
            "channel_type": "im",
            "blocks": [],
        }
        callback = payloads.event_callback(self.ws, event)
        return self._deliver("events_api", callback, False, delivery), callback

    def redeliver(self, callback: JsonDict, *, retry_num: int = 1) -> Ack:
        """Slack delivers the same event callback again (same ``event_id``), with
        ``X-Slack-Retry-Num`` (HTTP) / ``retry_attempt`` (Socket Mode)."""
        delivery = Delivery(retry_num=retry_num, retry_reason="http_timeout")
        return self._deliver("events_api", callback, False, delivery)

    def send_event(self, event: JsonDict, *, delivery: Delivery | None = None) -> Ack:
        """Deliver an Events API event (wrapped in event_callback)."""
        return self._deliver("events_api", payloads.event_callback(self.ws, event), False, delivery)


def _event_of(sent: JsonDict) -> JsonDict:
    """The message event of an event callback (or the event itself)."""
    event = sent.get("event") if sent.get("type") == "event_callback" else sent
    if not isinstance(event, dict) or event.get("type") != "message":
        raise ValueError("not a message event")
    return event


def chooser_offering(blocks: list[JsonDict], action_id: str, option: str) -> ElementRef:
    """The one select / radio group / overflow with ``action_id`` that offers ``option``."""
    found = [
        ref
        for ref in iter_elements(blocks)
        if ref.element.get("type") in CHOOSERS
        and ref.action_id == action_id
        and any(o.get("value") == option for o in _options(ref.element))
    ]
    if len(found) != 1:
        raise LookupError(f"{len(found)} elements {action_id!r} offer the option {option!r}")
    return found[0]


def overflow_option(blocks: list[JsonDict], label: str) -> tuple[ElementRef, str]:
    """The one overflow offering an option labelled ``label``, and that option's value."""
    found = [
        (ref, str(option.get("value")))
        for ref in iter_elements(blocks)
        if ref.element.get("type") == "overflow"
        for option in _options(ref.element)
        if (option.get("text") or {}).get("text") == label
    ]
    if len(found) != 1:
        offered = [
            (o.get("text") or {}).get("text")
            for ref in iter_elements(blocks)
            if ref.element.get("type") == "overflow"
            for o in _options(ref.element)
        ]
        raise LookupError(f"{len(found)} overflow options {label!r}; offered: {offered}")
    return found[0]


def _options(element: JsonDict) -> list[JsonDict]:
    options = list(element.get("options") or [])
    for group in element.get("option_groups") or []:
        options += group.get("options") or []
    return options
