"""response_url endpoints the fake issues with interactions: ≤5 uses within 30 minutes;
ephemeral / in_channel / replace_original / delete_original as Slack applies them."""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import parse_qsl

from kandev_slack.kits.fakeslack.api.chat import create_bot_message
from kandev_slack.kits.fakeslack.api.webapi import HttpAnswer
from kandev_slack.kits.fakeslack.context import SlackContext
from kandev_slack.kits.fakeslack.layout import assign_default_ids
from kandev_slack.kits.fakeslack.params import ApiError
from kandev_slack.kits.fakeslack.records import Ephemeral, ResponseUrlPost

JsonDict = dict[str, Any]
MAX_USES = 5
TTL_SECONDS = 30 * 60


@dataclass
class ResponseUrlOrigin:
    """Where an interaction happened: what its response_url may answer or replace."""

    id: str
    channel: str
    user: str
    message_ts: str | None
    is_ephemeral: bool
    issued_at: float
    uses: int = 0


class ResponseUrls:
    def __init__(self, ctx: SlackContext) -> None:
        self.ctx = ctx
        self.base_url = ""
        self._lock = threading.Lock()
        self._origins: dict[str, ResponseUrlOrigin] = {}

    def issue(
        self, channel: str, user: str, message_ts: str | None = None, is_ephemeral: bool = False
    ) -> str:
        url_id = f"{self.ctx.workspace.team_id}/{secrets.randbelow(10**12)}/{secrets.token_hex(12)}"
        with self._lock:
            self._origins[url_id] = ResponseUrlOrigin(
                url_id, channel, user, message_ts, is_ephemeral, time.monotonic()
            )
        return self.base_url + url_id

    def origin_of(self, url: str) -> ResponseUrlOrigin | None:
        with self._lock:
            return self._origins.get(url.removeprefix(self.base_url))

    def handle_post(self, url_id: str, content_type: str, body: bytes) -> HttpAnswer:
        with self._lock:
            origin = self._origins.get(url_id)
            problem = None
            if origin is None:
                problem = "no_such_url"
            elif origin.uses >= MAX_USES:
                problem = "used_url"
            elif time.monotonic() - origin.issued_at > TTL_SECONDS:
                problem = "expired_url"
            else:
                origin.uses += 1
        data: JsonDict = {}
        if problem is not None or origin is None:
            answer = HttpAnswer(404, {"ok": False, "error": problem})
        else:
            try:
                data = _decode(content_type, body)
                self.apply(origin, data, source="response_url")
                answer = HttpAnswer(200, {"ok": True})
            except ApiError as exc:
                answer = HttpAnswer(400, exc.body())
        self.ctx.state.add_response_post(
            ResponseUrlPost(url_id, data, time.time(), answer.status, answer.body)
        )
        return answer

    def apply(
        self,
        origin: ResponseUrlOrigin,
        data: JsonDict,
        source: Literal["response_url", "command_ack"],
    ) -> None:
        """Show `data` (a message payload with response_url flags) the way Slack would."""
        ctx, state = self.ctx, self.ctx.state
        original = (
            state.find_message(origin.channel, origin.message_ts)
            if origin.message_ts and not origin.is_ephemeral
            else None
        )
        if (
            origin.is_ephemeral
            and origin.message_ts
            and (data.get("delete_original") or data.get("replace_original"))
        ):
            _edit_ephemeral(self, origin, data, source)
            return
        if data.get("delete_original"):
            if original is not None:
                with state.lock:
                    original.deleted = True
                    state.changed()
            return
        text = data.get("text") or ""
        blocks = data.get("blocks")
        if not text and not blocks:
            raise ApiError("no_text")
        ctx.check_message(source, text, blocks)
        if data.get("replace_original") and original is not None:
            with state.lock:
                original.versions.append(original.to_slack())
                original.text = text
                original.blocks = assign_default_ids(blocks or [])
                original.edited_ts = f"{time.time():.6f}"
                state.changed()
        elif data.get("response_type") == "in_channel":
            create_bot_message(
                ctx,
                origin.channel,
                text=text,
                blocks=blocks,
                thread_ts=data.get("thread_ts"),
                via=source,
            )
        else:
            state.add_ephemeral(
                Ephemeral(
                    channel=origin.channel,
                    user=origin.user,
                    message_ts=ctx.clock.next(origin.channel),
                    text=text,
                    blocks=assign_default_ids(blocks or []),
                    thread_ts=data.get("thread_ts"),
                    source=source,
                    at=time.time(),
                )
            )


def _edit_ephemeral(self: Any, origin: ResponseUrlOrigin, data: JsonDict, source: str) -> None:
    """A button's response_url on an ephemeral message replaces or deletes that message, as
    Slack does (only its recipient saw it; nothing else changes)."""
    state = self.ctx.state
    if not data.get("delete_original"):
        text, blocks = data.get("text") or "", data.get("blocks")
        if not text and not blocks:
            raise ApiError("no_text")
        self.ctx.check_message(source, text, blocks)
    with state.lock:
        for index, shown in enumerate(state.ephemerals):
            if (shown.channel, shown.user, shown.message_ts) != (
                origin.channel,
                origin.user,
                origin.message_ts,
            ):
                continue
            if data.get("delete_original"):
                state.ephemerals[index] = replace(shown, deleted=True)
            else:
                state.ephemerals[index] = replace(
                    shown,
                    text=data.get("text") or "",
                    blocks=assign_default_ids(data.get("blocks") or []),
                    replaced=shown.replaced + 1,
                )
            state.changed()
            return


def _decode(content_type: str, body: bytes) -> JsonDict:
    try:
        text = body.decode("utf-8")
        if content_type.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
            text = dict(parse_qsl(text)).get("payload", "")
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError("invalid_payload") from exc
    if not isinstance(data, dict):
        raise ApiError("invalid_payload")
    return data
