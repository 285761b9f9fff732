"""What the page's user does, sent to the bot as Slack would send it: every interaction goes
through the one fake Slack's ``SlackDriver`` (signed with the signing secret, real payloads
built from what the fake recorded), and the bot's acks are applied as Slack's client applies
them (a modal's field errors, a refused submission, an app that did not answer)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kandev_slack.cards.ids import COMMAND
from kandev_slack.kits.fakeslack import (
    Ack,
    Ephemeral,
    FakeSlack,
    SlackDriver,
    SlackUser,
    ViewSubmissionBlocked,
)
from kandev_slack.preview.page import Memory

log = logging.getLogger("kandev_slack.preview.actions")
JsonDict = dict[str, Any]


class ActionError(ValueError):
    """The page asked for something that is not there (a stale or forged request)."""


def form_values(fields: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"block/action": value}`` from the page → ``{block: {action: value}}``; an empty
    text is no value, as Slack sends it."""
    values: dict[str, dict[str, Any]] = {}
    for name, value in fields.items():
        block_id, sep, action_id = str(name).rpartition("/")
        if not sep:
            raise ActionError(f"not a field name: {name!r}")
        values.setdefault(block_id, {})[action_id] = None if value == "" else value
    return values


class Actions:
    """Carry out one page request for one preview user (``act``), remembering per user what
    the preview itself must show (field errors, notices)."""

    def __init__(self, fake: FakeSlack, driver: SlackDriver) -> None:
        self.fake = fake
        self.driver = driver
        self._lock = threading.Lock()
        self._memories: dict[str, Memory] = {}
        self.changes = 0  # bumped when a memory changes (the page's version includes it)

    def memory(self, user_id: str) -> Memory:
        with self._lock:
            return self._memories.setdefault(user_id, Memory())

    def notice(self, user_id: str, text: str) -> None:
        with self._lock:
            self._memories.setdefault(user_id, Memory()).notice(text)
            self.changes += 1
        self.fake.state.changed()

    def act(self, user: SlackUser, request: Mapping[str, Any]) -> JsonDict:
        kind = str(request.get("kind", ""))
        handler: Callable[[SlackUser, Mapping[str, Any]], Ack | None] | None = getattr(
            self, f"_do_{kind}", None
        )
        if handler is None:
            raise ActionError(f"unknown action {kind!r}")
        try:
            ack = handler(user, request)
        except ViewSubmissionBlocked as blocked:
            self.notice(user.id, f"Slack would not send this form: {blocked}")
            return {"ok": False, "blocked": str(blocked)}
        except (KeyError, LookupError) as missing:
            raise ActionError(f"not there any more: {missing}") from missing
        if ack is not None and not ack.ok:
            self.notice(
                user.id,
                f"The app answered HTTP {ack.status}: Slack would show "
                "“This app responded with an error” (or “did not respond”).",
            )
        return {"ok": ack is None or ack.ok, "status": ack.status if ack else None}

    # -- the interactions -------------------------------------------------------------------
    def _do_click(self, user: SlackUser, r: Mapping[str, Any]) -> Ack:
        surface = r.get("surface")
        action_id, value = _text(r, "action_id"), _text(r, "value") or None
        if surface == "message":
            version = r.get("version")
            return self.driver.click(
                _text(r, "channel"),
                _text(r, "ts"),
                action_id=action_id,
                value=value,
                block_id=_text(r, "block_id") or None,
                user=user,
                seen_version=int(version) if isinstance(version, int | str) and version else None,
            )
        if surface == "ephemeral":
            ephemeral = self._ephemeral(user, _text(r, "channel"), _text(r, "ts"))
            return self.driver.click_ephemeral(ephemeral, action_id=action_id, value=value)
        if surface == "view":
            return self.driver.click_in_view(
                _text(r, "view_id"), action_id=action_id, value=value, user=user
            )
        raise ActionError(f"no surface {surface!r}")

    def _do_select(self, user: SlackUser, r: Mapping[str, Any]) -> Ack:
        option = r.get("option")
        if not isinstance(option, str | list):
            raise ActionError("a choice needs an option")
        return self.driver.select(
            _text(r, "channel"),
            _text(r, "ts"),
            action_id=_text(r, "action_id"),
            option=option,
            block_id=_text(r, "block_id") or None,
            user=user,
        )

    def _do_pick(self, user: SlackUser, r: Mapping[str, Any]) -> Ack | None:
        """A pick in a form's input with ``dispatch_action`` (the answer form's "Other…")."""
        option = r.get("option")
        if not isinstance(option, str):
            raise ActionError("a pick needs an option")
        return self.driver.pick_in_form(
            _text(r, "view_id"), block_id=_text(r, "block_id"), option=option, user=user
        )

    def _do_submit(self, user: SlackUser, r: Mapping[str, Any]) -> Ack | None:
        view_id = _text(r, "view_id")
        fields = r.get("values")
        values = form_values(fields if isinstance(fields, dict) else {})
        submitted = self.fake.view(view_id)
        try:
            ack = self.driver.submit_view(view_id, values, user=user)
        except ViewSubmissionBlocked:
            missing = required_empty(submitted.blocks, values)
            if not missing:
                raise
            # Slack's client says so under each required field and sends nothing.
            self._remember_errors(
                user, f"{view_id}:{submitted.hash}", dict.fromkeys(missing, REQUIRED)
            )
            return None
        body = ack.json if ack.ok else None
        errors = body.get("errors") if body else None
        self._remember_errors(user, f"{view_id}:{submitted.hash}", errors)
        return ack

    def _remember_errors(self, user: SlackUser, key: str, errors: object) -> None:
        """The field errors a modal shows (None / not a dict: none)."""
        with self._lock:
            memory = self._memories.setdefault(user.id, Memory())
            if isinstance(errors, dict):
                memory.errors[key] = {str(k): str(v) for k, v in errors.items()}
            else:
                memory.errors.pop(key, None)
            self.changes += 1
        self.fake.state.changed()

    def _do_close(self, user: SlackUser, r: Mapping[str, Any]) -> Ack | None:
        return self.driver.close_view(_text(r, "view_id"), user=user)

    def _do_slash(self, user: SlackUser, r: Mapping[str, Any]) -> Ack:
        text = _text(r, "text").strip()
        command, _, rest = text.partition(" ")
        if command != COMMAND:
            raise ActionError(f"the app has one command: {COMMAND}")
        return self.driver.slash(command, rest.strip(), user=user, channel=_text(r, "channel"))

    def _do_say(self, user: SlackUser, r: Mapping[str, Any]) -> None:
        text = _text(r, "text").strip()
        if text:
            self.fake.post_user_message(_text(r, "channel"), user.id, text)

    def _do_reply(self, user: SlackUser, r: Mapping[str, Any]) -> Ack | None:
        """A reply in a message's thread: shown there, and sent to the app as Slack sends it
        (the ``message`` event of the channel it subscribes to)."""
        text = _text(r, "text").strip()
        if not text:
            return None
        channel, thread_ts = _text(r, "channel"), _text(r, "thread_ts")
        self.fake.message(channel, thread_ts)  # the message replied to is there (else 400)
        posted = self.fake.post_user_message(channel, user.id, text, thread_ts=thread_ts)
        ack, _ = self.driver.reply_in_thread(
            channel, thread_ts, text, user=user, event={"ts": posted.ts, "event_ts": posted.ts}
        )
        return ack

    def _do_shortcut(self, user: SlackUser, r: Mapping[str, Any]) -> Ack:
        return self.driver.message_shortcut(
            _text(r, "callback_id"), _text(r, "channel"), _text(r, "ts"), user=user
        )

    def _do_home(self, user: SlackUser, r: Mapping[str, Any]) -> Ack:
        return self.driver.app_home_opened(user)

    def _ephemeral(self, user: SlackUser, channel: str, ts: str) -> Ephemeral:
        for ephemeral in self.fake.ephemerals(user.id, channel):
            if ephemeral.message_ts == ts:
                return ephemeral
        raise ActionError(f"no ephemeral message {ts} for {user.id}")


def _text(request: Mapping[str, Any], key: str) -> str:
    value = request.get(key, "")
    return value if isinstance(value, str) else str(value)


#: What Slack's client says under a required field left empty.
REQUIRED = "Please complete this required field."


def required_empty(blocks: list[JsonDict], values: Mapping[str, Any]) -> list[str]:
    """The block ids of the required inputs of ``blocks`` that ``values`` leaves empty."""
    missing = []
    for block in blocks:
        if block.get("type") != "input" or block.get("optional"):
            continue
        block_id = str(block.get("block_id", ""))
        entered = values.get(block_id)
        given = entered.values() if isinstance(entered, dict) else ()
        if all(v in (None, "", [], {}) for v in given):
            missing.append(block_id)
    return missing
