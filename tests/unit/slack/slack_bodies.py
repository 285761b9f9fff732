"""Slack-shaped request bodies for the listener tests, dispatched in-process through a real Bolt
``App`` (``dispatch``), built with the fake Slack's payload helpers."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from slack_bolt import App
from slack_bolt.request import BoltRequest

from kandev_slack.cards.ids import COMMAND, SHORTCUT_REJECT
from kandev_slack.kits.fakeslack import (
    ALICE,
    SlackUser,
    Workspace,
    build_state_values,
    find_element,
    payloads,
)
from kandev_slack.slack_api.gateway import Message

WS = Workspace()
TRIGGER_ID = "13345224609.738474920.8088930838d88f008e0"
RESPONSE_URL = "https://hooks.slack.test/actions/T0FAKETEAM/1/response"
VIEW_ID = "V0FAKEVIEW1"


def dispatch(app: App, body: dict[str, Any]) -> tuple[int, Any]:
    """Deliver ``body`` as Socket Mode would; returns (status, what was acked: "" for a bare
    ack, the text, or the JSON of a response_action)."""
    response = app.dispatch(BoltRequest(body=body, mode="socket_mode"))
    acked = response.body or ""
    if acked.startswith("{"):
        acked = json.loads(acked)
    return response.status, acked


def eventually(check: Callable[[], Any], *, timeout: float = 10.0) -> Any:
    """Wait for what a listener does after its ack (on Bolt's threads)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            assert found, "the listener did not get there"
            return found
        time.sleep(0.01)


def card_click(
    message: Message,
    channel: str,
    ts: str,
    *,
    user: SlackUser = ALICE,
    action_id: str | None = None,
    text: str | None = None,
    value: Any = None,
) -> dict[str, Any]:
    """A click on a button of the card message at (channel, ts); ``value`` overrides the
    button's value (a forged one)."""
    ref = find_element(message.blocks, action_id=action_id, text=text)
    action = payloads.action_item(ref)
    if value is not None:
        action["value"] = value
    return payloads.block_actions(
        WS,
        user,
        container={
            "type": "message",
            "message_ts": ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        actions=[action],
        trigger_id=TRIGGER_ID,
        response_url=RESPONSE_URL,
        channel=WS.channels[channel],
        message={"type": "message", "ts": ts, "text": message.text, "blocks": message.blocks},
    )


def card_choice(
    message: Message, channel: str, ts: str, *, label: str, user: SlackUser = ALICE
) -> dict[str, Any]:
    """The option labelled ``label`` chosen in the card's "More" overflow."""
    from kandev_slack.kits.fakeslack import overflow_option

    ref, chosen = overflow_option(message.blocks, label)
    return payloads.block_actions(
        WS,
        user,
        container={
            "type": "message",
            "message_ts": ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        actions=[payloads.action_item(ref, chosen)],
        trigger_id=TRIGGER_ID,
        response_url=RESPONSE_URL,
        channel=WS.channels[channel],
        message={"type": "message", "ts": ts, "text": message.text, "blocks": message.blocks},
    )


def listing_click(
    blocks: list[dict], channel: str, *, user: SlackUser = ALICE, **find: Any
) -> dict[str, Any]:
    """A click on a button of an ephemeral message (the listing) in ``channel``."""
    ref = find_element(blocks, **find)
    return payloads.block_actions(
        WS,
        user,
        container={
            "type": "message",
            "message_ts": "1700000999.000100",
            "channel_id": channel,
            "is_ephemeral": True,
        },
        actions=[payloads.action_item(ref)],
        trigger_id=TRIGGER_ID,
        response_url=RESPONSE_URL,
        channel=WS.channels[channel],
    )


def home_click(view: dict, *, user: SlackUser = ALICE, **find: Any) -> dict[str, Any]:
    """A click on a button of the person's App Home tab (no channel, no response_url)."""
    ref = find_element(view["blocks"], **find)
    return payloads.block_actions(
        WS,
        user,
        container={"type": "view", "view_id": VIEW_ID},
        actions=[payloads.action_item(ref)],
        trigger_id=TRIGGER_ID,
        response_url=None,
        view={**view, "id": VIEW_ID},
    )


def submission(
    view: dict, values: dict[str, dict[str, Any]] | None = None, *, user: SlackUser = ALICE
) -> dict[str, Any]:
    """The submission of an opened ``view`` with ``values`` ({block_id: {action_id: value}})."""
    state = build_state_values(view["blocks"], values, enforce_client_rules=False)
    submitted = {**view, "id": VIEW_ID, "state": {"values": state}}
    return payloads.view_submission(WS, user, submitted, TRIGGER_ID)


def shortcut(channel: str, ts: str, *, user: SlackUser = ALICE) -> dict[str, Any]:
    """ "Reject agent question" on the message at (channel, ts)."""
    return payloads.message_shortcut(
        WS,
        user,
        WS.channels[channel],
        callback_id=SHORTCUT_REJECT,
        message={"type": "message", "ts": ts, "text": "a message"},
        trigger_id=TRIGGER_ID,
        response_url=RESPONSE_URL,
    )


def command(text: str = "", *, channel: str = "C0QUESTION", user: SlackUser = ALICE) -> dict:
    return payloads.slash_command(
        WS,
        user,
        WS.channels[channel],
        command=COMMAND,
        text=text,
        trigger_id=TRIGGER_ID,
        response_url=RESPONSE_URL,
    )


def event(fields: dict[str, Any]) -> dict[str, Any]:
    return payloads.event_callback(WS, fields)
