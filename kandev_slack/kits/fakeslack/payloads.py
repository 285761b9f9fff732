"""Request payloads shaped exactly like the ones Slack sends to an app."""

from __future__ import annotations

import time
from typing import Any

from kandev_slack.kits.fakeslack.api.view_state import option_by_value
from kandev_slack.kits.fakeslack.config import Channel, SlackUser, Workspace
from kandev_slack.kits.fakeslack.ids import event_id
from kandev_slack.kits.fakeslack.layout import ElementRef

JsonDict = dict[str, Any]


def action_ts() -> str:
    return f"{time.time():.6f}"


def _common(ws: Workspace, user: SlackUser) -> JsonDict:
    return {
        "user": user.payload_user(ws.team_id),
        "api_app_id": ws.app_id,
        "token": ws.verification_token,
        "team": ws.team_payload(),
        "enterprise": None,
        "is_enterprise_install": False,
    }


def channel_payload(channel: Channel) -> JsonDict:
    return {"id": channel.id, "name": channel.name}


def action_item(ref: ElementRef, selected: str | list[str] | None = None) -> JsonDict:
    """One entry of block_actions `actions[]` for the element the person used."""
    element = ref.element
    item: JsonDict = {
        "action_id": ref.action_id,
        "block_id": ref.block_id,
        "type": ref.type,
        "action_ts": action_ts(),
    }
    if ref.type in ("button", "workflow_button"):
        item["text"] = element.get("text")
        if "value" in element:
            item["value"] = element["value"]
        if "style" in element:
            item["style"] = element["style"]
    elif ref.type in ("static_select", "radio_buttons", "overflow", "external_select"):
        if selected is None or isinstance(selected, list):
            raise ValueError(f"{ref.type} needs one selected option value")
        item["selected_option"] = option_by_value(element, selected)
        if "placeholder" in element:
            item["placeholder"] = element["placeholder"]
    elif ref.type in ("checkboxes", "multi_static_select"):
        chosen = [selected] if isinstance(selected, str) else list(selected or [])
        item["selected_options"] = [option_by_value(element, v) for v in chosen]
    else:
        raise ValueError(f"the driver cannot act on a {ref.type} element")
    return item


def block_actions(
    ws: Workspace,
    user: SlackUser,
    *,
    container: JsonDict,
    actions: list[JsonDict],
    trigger_id: str,
    response_url: str | None,
    channel: Channel | None = None,
    message: JsonDict | None = None,
    view: JsonDict | None = None,
    state_values: JsonDict | None = None,
) -> JsonDict:
    payload: JsonDict = {
        "type": "block_actions",
        **_common(ws, user),
        "container": container,
        "trigger_id": trigger_id,
        "actions": actions,
    }
    if channel is not None:
        payload["channel"] = channel_payload(channel)
    if message is not None:
        payload["message"] = message
    if view is not None:
        payload["view"] = view
    else:
        payload["state"] = {"values": state_values or {}}
    if response_url is not None:
        payload["response_url"] = response_url
    return payload


def view_submission(ws: Workspace, user: SlackUser, view: JsonDict, trigger_id: str) -> JsonDict:
    return {
        "type": "view_submission",
        **_common(ws, user),
        "trigger_id": trigger_id,
        "view": view,
        "response_urls": [],
    }


def view_closed(ws: Workspace, user: SlackUser, view: JsonDict, is_cleared: bool) -> JsonDict:
    return {"type": "view_closed", **_common(ws, user), "view": view, "is_cleared": is_cleared}


def slash_command(
    ws: Workspace,
    user: SlackUser,
    channel: Channel,
    *,
    command: str,
    text: str,
    trigger_id: str,
    response_url: str,
) -> dict[str, str]:
    """The form fields of a slash command request (also the Socket Mode payload)."""
    return {
        "token": ws.verification_token,
        "team_id": ws.team_id,
        "team_domain": ws.team_domain,
        "channel_id": channel.id,
        "channel_name": channel.name if not channel.is_im else "directmessage",
        "user_id": user.id,
        "user_name": user.name,
        "command": command,
        "text": text,
        "api_app_id": ws.app_id,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id,
    }


def message_shortcut(
    ws: Workspace,
    user: SlackUser,
    channel: Channel,
    *,
    callback_id: str,
    message: JsonDict,
    trigger_id: str,
    response_url: str,
) -> JsonDict:
    return {
        "type": "message_action",
        **_common(ws, user),
        "action_ts": action_ts(),
        "callback_id": callback_id,
        "trigger_id": trigger_id,
        "response_url": response_url,
        "channel": channel_payload(channel),
        "message_ts": message["ts"],
        "message": message,
    }


def global_shortcut(
    ws: Workspace, user: SlackUser, *, callback_id: str, trigger_id: str
) -> JsonDict:
    return {
        "type": "shortcut",
        **_common(ws, user),
        "action_ts": action_ts(),
        "callback_id": callback_id,
        "trigger_id": trigger_id,
    }


def event_callback(ws: Workspace, event: JsonDict) -> JsonDict:
    """The Events API envelope around `event` (HTTP body, or Socket Mode `events_api` payload)."""
    return {
        "token": ws.verification_token,
        "team_id": ws.team_id,
        "context_team_id": ws.team_id,
        "api_app_id": ws.app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id(),
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": ws.team_id,
                "user_id": ws.bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
    }


def app_home_opened(user: SlackUser, dm_channel: str, view: JsonDict | None) -> JsonDict:
    event: JsonDict = {
        "type": "app_home_opened",
        "user": user.id,
        "channel": dm_channel,
        "tab": "home",
        "event_ts": action_ts(),
    }
    if view is not None:
        event["view"] = view
    return event
