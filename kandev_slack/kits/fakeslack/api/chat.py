"""chat.* and conversations.history / replies: messages the app posts, edits and reads back."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

from kandev_slack.kits.fakeslack.context import SlackContext
from kandev_slack.kits.fakeslack.layout import assign_default_ids
from kandev_slack.kits.fakeslack.params import ApiError, ApiRequest
from kandev_slack.kits.fakeslack.records import Ephemeral, PostedMessage
from kandev_slack.kits.fakeslack.store import ts_key

JsonDict = dict[str, Any]
Handler = Callable[[ApiRequest], JsonDict]


def _metadata(req: ApiRequest) -> JsonDict | None:
    metadata = req.json_arg("metadata", "invalid_metadata_format")
    if metadata in (None, {}):
        return metadata
    if (
        not isinstance(metadata, dict)
        or not isinstance(metadata.get("event_type"), str)
        or not isinstance(metadata.get("event_payload"), dict)
    ):
        raise ApiError("invalid_metadata_format")
    return metadata


def _blocks(req: ApiRequest) -> list[JsonDict] | None:
    return req.json_arg("blocks", "invalid_blocks_format")


def create_bot_message(
    ctx: SlackContext,
    channel: str,
    *,
    text: str,
    blocks: list[JsonDict] | None,
    metadata: JsonDict | None = None,
    attachments: list[JsonDict] | None = None,
    thread_ts: str | None = None,
    via: str = "chat.postMessage",
) -> PostedMessage:
    ws = ctx.workspace
    message = PostedMessage(
        channel=channel,
        ts=ctx.clock.next(channel),
        text=text,
        blocks=assign_default_ids(blocks or []),
        user=ws.bot_user_id,
        bot_id=ws.bot_id,
        app_id=ws.app_id,
        team=ws.team_id,
        metadata=metadata or None,
        attachments=attachments or None,
        thread_ts=thread_ts or None,
        via=via,
    )
    ctx.state.add_message(message)
    return message


def _existing(ctx: SlackContext, channel: str, ts: str) -> PostedMessage:
    message = ctx.state.find_message(channel, ts)
    if message is None or message.deleted:
        raise ApiError("message_not_found")
    return message


def _encode_cursor(ts: str) -> str:
    return base64.b64encode(f"next_ts:{ts}".encode()).decode()


def _decode_cursor(cursor: str) -> str:
    try:
        decoded = base64.b64decode(cursor.encode()).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError("invalid_cursor") from exc
    if not decoded.startswith("next_ts:"):
        raise ApiError("invalid_cursor")
    return decoded.removeprefix("next_ts:")


class ChatApi:
    def __init__(self, ctx: SlackContext) -> None:
        self.ctx = ctx

    def handlers(self) -> dict[str, Handler]:
        return {
            "chat.postMessage": self.post_message,
            "chat.update": self.update,
            "chat.postEphemeral": self.post_ephemeral,
            "chat.getPermalink": self.get_permalink,
            "chat.delete": self.delete,
            "conversations.history": self.history,
            "conversations.replies": self.replies,
        }

    def post_message(self, req: ApiRequest) -> JsonDict:
        ctx = self.ctx
        channel = ctx.resolve_channel(req.params.get("channel"))
        retry_after = ctx.faults.post_message_retry_after(channel)
        if retry_after is not None:
            raise ApiError("ratelimited", status=429, headers={"Retry-After": str(retry_after)})
        text = req.text("text")
        blocks = _blocks(req)
        attachments = req.json_arg("attachments", "invalid_attachments")
        metadata = _metadata(req)
        if not text and not blocks and not attachments:
            raise ApiError("no_text")
        ctx.check_message(req.method, text, blocks)
        message = create_bot_message(
            ctx,
            channel,
            text=text,
            blocks=blocks,
            metadata=metadata,
            attachments=attachments,
            thread_ts=req.text("thread_ts") or None,
        )
        return {"ok": True, "channel": channel, "ts": message.ts, "message": message.to_slack()}

    def update(self, req: ApiRequest) -> JsonDict:
        ctx = self.ctx
        channel = ctx.resolve_channel(req.params.get("channel"))
        ts = req.required("ts", "message_not_found")
        with ctx.state.lock:
            message = _existing(ctx, channel, ts)
            if message.bot_id != ctx.workspace.bot_id:
                raise ApiError("cant_update_message")
            text = req.text("text") if req.has("text") else message.text
            blocks = _blocks(req) if req.has("blocks") else message.blocks
            metadata = _metadata(req) if req.has("metadata") else message.metadata
            attachments = (
                req.json_arg("attachments", "invalid_attachments")
                if req.has("attachments")
                else message.attachments
            )
            if not text and not blocks and not attachments:
                raise ApiError("no_text")
            ctx.check_message(req.method, text, blocks if req.has("blocks") else None)
            message.versions.append(message.to_slack())
            message.text = text
            if req.has("blocks"):
                message.blocks = assign_default_ids(blocks or [])
            message.metadata = metadata or None
            message.attachments = attachments or None
            message.edited_ts = f"{time.time():.6f}"
            ctx.state.changed()
            return {
                "ok": True,
                "channel": channel,
                "ts": ts,
                "text": message.text,
                "message": message.to_slack(),
            }

    def post_ephemeral(self, req: ApiRequest) -> JsonDict:
        ctx = self.ctx
        channel = ctx.resolve_channel(req.params.get("channel"))
        user = req.required("user", "user_not_in_channel")
        if ctx.user(user) is None:
            raise ApiError("user_not_in_channel")
        text = req.text("text")
        blocks = _blocks(req)
        if not text and not blocks and not req.params.get("attachments"):
            raise ApiError("no_text")
        ctx.check_message(req.method, text, blocks)
        message_ts = ctx.clock.next(channel)
        ctx.state.add_ephemeral(
            Ephemeral(
                channel=channel,
                user=user,
                message_ts=message_ts,
                text=text,
                blocks=assign_default_ids(blocks or []),
                thread_ts=req.text("thread_ts") or None,
                source="chat.postEphemeral",
                at=time.time(),
            )
        )
        return {"ok": True, "message_ts": message_ts}

    def get_permalink(self, req: ApiRequest) -> JsonDict:
        ctx = self.ctx
        channel = ctx.resolve_channel(req.params.get("channel"))
        ts = req.required("message_ts", "message_not_found")
        message = _existing(ctx, channel, ts)
        link = f"{ctx.workspace.url}archives/{channel}/p{ts.replace('.', '')}"
        if message.thread_ts and message.thread_ts != ts:
            link += f"?thread_ts={message.thread_ts}&cid={channel}"
        return {"ok": True, "channel": channel, "permalink": link}

    def delete(self, req: ApiRequest) -> JsonDict:
        ctx = self.ctx
        channel = ctx.resolve_channel(req.params.get("channel"))
        ts = req.required("ts", "message_not_found")
        with ctx.state.lock:
            message = _existing(ctx, channel, ts)
            if message.bot_id != ctx.workspace.bot_id:
                raise ApiError("cant_delete_message")
            message.deleted = True
            ctx.state.changed()
        return {"ok": True, "channel": channel, "ts": ts}

    def history(self, req: ApiRequest) -> JsonDict:
        ctx = self.ctx
        channel = ctx.resolve_channel(req.params.get("channel"))
        limit = max(1, min(req.number("limit", 100), 999))
        include_metadata = req.flag("include_all_metadata")
        inclusive = req.flag("inclusive")
        oldest, latest = req.text("oldest"), req.text("latest")
        messages = [
            m for m in ctx.state.live_messages(channel) if not m.thread_ts or m.thread_ts == m.ts
        ]
        messages.reverse()  # newest first, as Slack returns them

        def in_range(m: PostedMessage) -> bool:
            key = ts_key(m.ts)
            if oldest and (key < ts_key(oldest) or (key == ts_key(oldest) and not inclusive)):
                return False
            return not (
                latest and (key > ts_key(latest) or (key == ts_key(latest) and not inclusive))
            )

        messages = [m for m in messages if in_range(m)]
        cursor = req.text("cursor")
        if cursor:
            start = ts_key(_decode_cursor(cursor))
            messages = [m for m in messages if ts_key(m.ts) <= start]
        page, rest = messages[:limit], messages[limit:]
        return {
            "ok": True,
            "messages": [m.to_slack(include_metadata=include_metadata) for m in page],
            "has_more": bool(rest),
            "pin_count": 0,
            "response_metadata": {"next_cursor": _encode_cursor(rest[0].ts) if rest else ""},
        }

    def replies(self, req: ApiRequest) -> JsonDict:
        ctx = self.ctx
        channel = ctx.resolve_channel(req.params.get("channel"))
        ts = req.required("ts", "thread_not_found")
        parent = ctx.state.find_message(channel, ts)
        if parent is None or parent.deleted:
            raise ApiError("thread_not_found")
        include_metadata = req.flag("include_all_metadata")
        thread = [parent] + [
            m for m in ctx.state.live_messages(channel) if m.thread_ts == ts and m.ts != ts
        ]
        return {
            "ok": True,
            "messages": [m.to_slack(include_metadata=include_metadata) for m in thread],
            "has_more": False,
            "response_metadata": {"next_cursor": ""},
        }
