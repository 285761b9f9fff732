"""What every Web API handler needs: the workspace, the memory, ids, and payload validation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kandev_slack.kits.fakeslack.blockkit import (
    slack_error_messages,
    validate_message,
    validate_view,
)
from kandev_slack.kits.fakeslack.config import Channel, SlackUser, Workspace
from kandev_slack.kits.fakeslack.faults import Faults
from kandev_slack.kits.fakeslack.ids import TsClock
from kandev_slack.kits.fakeslack.params import ApiError
from kandev_slack.kits.fakeslack.store import SlackState

JsonDict = dict[str, Any]


class SlackContext:
    def __init__(self, workspace: Workspace, state: SlackState, faults: Faults) -> None:
        self.workspace = workspace
        self.state = state
        self.faults = faults
        self.clock = TsClock()
        self.trigger_ttl = 3.0
        self.socket_url: Callable[[], str] | None = None

    def resolve_channel(self, value: Any) -> str:
        """A channel id from an id, a name ("#general" or "general") or a user id (their DM)."""
        ws = self.workspace
        if not isinstance(value, str) or not value:
            raise ApiError("channel_not_found")
        with self.state.lock:
            if value in ws.channels:
                return value
            name = value.removeprefix("#")
            for channel in ws.channels.values():
                if channel.name == name and not channel.is_im:
                    return channel.id
            if value in ws.users:
                dm_id = "D" + value[1:]
                ws.channels.setdefault(dm_id, Channel(id=dm_id, name=dm_id, is_im=True, user=value))
                return dm_id
        raise ApiError("channel_not_found")

    def user(self, user_id: str) -> SlackUser | None:
        with self.state.lock:
            return self.workspace.users.get(user_id)

    def check_message(self, method: str, text: Any, blocks: Any) -> None:
        """Record violations of a message payload; reject it like Slack if any is an error."""
        found = validate_message(method, text, blocks)
        self.state.add_violations(found)
        errors = [v for v in found if v.level == "error"]
        if any(v.pointer == "/text" for v in errors):
            raise ApiError("msg_too_long")
        if errors:
            raise ApiError(
                "invalid_blocks",
                errors=[f"{v.message} [json-pointer:{v.pointer}]" for v in errors],
                response_metadata={"messages": slack_error_messages(errors)},
            )

    def check_view(self, method: str, view: Any) -> None:
        """Record violations of a view payload; reject it like Slack (`invalid_arguments`)."""
        found = validate_view(method, view)
        self.state.add_violations(found)
        errors = [v for v in found if v.level == "error"]
        if errors:
            raise ApiError(
                "invalid_arguments", response_metadata={"messages": slack_error_messages(errors)}
            )
