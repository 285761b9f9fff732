"""auth.test, users.info, usergroups.users.list, conversations.info / .members,
apps.connections.open."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kandev_slack.kits.fakeslack.config import SlackUser
from kandev_slack.kits.fakeslack.context import SlackContext
from kandev_slack.kits.fakeslack.params import ApiError, ApiRequest

JsonDict = dict[str, Any]
Handler = Callable[[ApiRequest], JsonDict]


def user_object(user: SlackUser, team_id: str) -> JsonDict:
    """As users.info describes a person (``team_id``: the workspace's; a Slack Connect member
    has their own organisation's)."""
    team_id = user.team_id or team_id
    return {
        "id": user.id,
        "team_id": team_id,
        "name": user.name,
        "deleted": False,
        "real_name": user.real_name or user.name,
        "tz": user.tz,
        "is_bot": user.is_bot,
        "is_app_user": False,
        "is_restricted": user.is_restricted or user.is_ultra_restricted,
        "is_ultra_restricted": user.is_ultra_restricted,
        "profile": {
            "real_name": user.real_name or user.name,
            "display_name": user.name,
            "team": team_id,
        },
    }


class DirectoryApi:
    def __init__(self, ctx: SlackContext) -> None:
        self.ctx = ctx

    def handlers(self) -> dict[str, Handler]:
        return {
            "auth.test": self.auth_test,
            "users.info": self.users_info,
            "usergroups.users.list": self.usergroup_users,
            "conversations.info": self.conversation_info,
            "conversations.members": self.conversation_members,
            "conversations.open": self.conversation_open,
            "apps.connections.open": self.connections_open,
        }

    def auth_test(self, req: ApiRequest) -> JsonDict:
        ws = self.ctx.workspace
        return {
            "ok": True,
            "url": ws.url,
            "team": ws.team_name,
            "user": ws.bot_name,
            "team_id": ws.team_id,
            "user_id": ws.bot_user_id,
            "bot_id": ws.bot_id,
            "is_enterprise_install": False,
        }

    def users_info(self, req: ApiRequest) -> JsonDict:
        ws = self.ctx.workspace
        user_id = req.required("user", "user_not_found")
        if user_id == ws.bot_user_id:
            bot = SlackUser(id=ws.bot_user_id, name=ws.bot_name, is_bot=True)
            return {"ok": True, "user": user_object(bot, ws.team_id)}
        user = self.ctx.user(user_id)
        if user is None:
            raise ApiError("user_not_found")
        return {"ok": True, "user": user_object(user, ws.team_id)}

    def conversation_open(self, req: ApiRequest) -> JsonDict:
        """The bot's DM with one user (``users``), as conversations.open answers it."""
        users = req.required("users", "users_list_not_supplied")
        if "," in users:
            raise ApiError("not_supported")
        if self.ctx.user(users) is None:
            raise ApiError("user_not_found")
        return {"ok": True, "channel": {"id": self.ctx.resolve_channel(users)}}

    def usergroup_users(self, req: ApiRequest) -> JsonDict:
        group = req.required("usergroup", "no_such_subteam")
        with self.ctx.state.lock:
            members = self.ctx.workspace.usergroups.get(group)
            if members is None:
                raise ApiError("no_such_subteam")
            return {"ok": True, "users": list(members)}

    def conversation_info(self, req: ApiRequest) -> JsonDict:
        channel_id = self.ctx.resolve_channel(req.params.get("channel"))
        channel = self.ctx.workspace.channels[channel_id]
        info: JsonDict = {
            "id": channel.id,
            "name": channel.name,
            "is_channel": not channel.is_private and not channel.is_im,
            "is_group": channel.is_private,
            "is_im": channel.is_im,
            "is_private": channel.is_private or channel.is_im,
            "is_archived": False,
            "is_member": True,
            "created": 1_600_000_000,
            "context_team_id": self.ctx.workspace.team_id,
        }
        if channel.is_im:
            info["user"] = channel.user
        return {"ok": True, "channel": info}

    def conversation_members(self, req: ApiRequest) -> JsonDict:
        """Paged like Slack: ``limit`` per page, ``response_metadata.next_cursor``."""
        channel_id = self.ctx.resolve_channel(req.params.get("channel"))
        ws = self.ctx.workspace
        with self.ctx.state.lock:
            listed = ws.channel_members.get(channel_id)
            members = list(listed) if listed is not None else [*ws.users, ws.bot_user_id]
            channel = ws.channels.get(channel_id)
        if channel is not None and channel.is_private and ws.bot_user_id not in members:
            raise ApiError("channel_not_found")  # a private channel the bot is not in
        cursor = req.params.get("cursor") or "0"
        if not str(cursor).isdigit():
            raise ApiError("invalid_cursor")
        limit = max(1, min(int(req.params.get("limit") or 100), 1000))
        start = int(cursor)
        page = members[start : start + limit]
        more = start + limit < len(members)
        return {
            "ok": True,
            "members": page,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def connections_open(self, req: ApiRequest) -> JsonDict:
        if self.ctx.socket_url is None:
            raise ApiError("internal_error")
        return {"ok": True, "url": self.ctx.socket_url()}
