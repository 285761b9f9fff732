"""The Web API front door: parse, authenticate, inject faults, dispatch, record."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from kandev_slack.kits.fakeslack.api.chat import ChatApi
from kandev_slack.kits.fakeslack.api.directory import DirectoryApi
from kandev_slack.kits.fakeslack.api.views import ViewsApi
from kandev_slack.kits.fakeslack.context import SlackContext
from kandev_slack.kits.fakeslack.params import ApiError, ApiRequest, bearer_token, parse_params

JsonDict = dict[str, Any]
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
JSON_ARGS = ("blocks", "view", "metadata", "attachments")


@dataclass
class HttpAnswer:
    status: int
    body: JsonDict
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection instead of sending this answer


def _readable(params: JsonDict) -> JsonDict:
    """Params as recorded: the token dropped, JSON-string arguments decoded."""
    out = {k: v for k, v in params.items() if k != "token"}
    for key in JSON_ARGS:
        if isinstance(out.get(key), str):
            with contextlib.suppress(json.JSONDecodeError):
                out[key] = json.loads(out[key])
    return out


class WebApi:
    def __init__(self, ctx: SlackContext) -> None:
        self.ctx = ctx
        self.views = ViewsApi(ctx)
        self.handlers = {
            **ChatApi(ctx).handlers(),
            **self.views.handlers(),
            **DirectoryApi(ctx).handlers(),
        }

    def _authorize(self, method: str, token: str | None) -> None:
        ws = self.ctx.workspace
        if not token:
            raise ApiError("not_authed")
        wanted, other = (
            (ws.app_token, ws.bot_token)
            if method in APP_TOKEN_METHODS
            else (ws.bot_token, ws.app_token)
        )
        if token == other:
            raise ApiError("not_allowed_token_type")
        if token != wanted:
            raise ApiError("invalid_auth")

    def handle(self, method: str, headers: dict[str, str], body: bytes, query: str) -> HttpAnswer:
        params: JsonDict = {}
        token: str | None = None
        content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
        try:
            params = parse_params(content_type, body, query)
            token = bearer_token(headers, params)
            answer = self._answer(method, params, token, headers)
        except ApiError as exc:
            answer = HttpAnswer(exc.status, exc.body(), exc.headers)
        self.ctx.state.record_call(method, _readable(params), token, answer.status, answer.body)
        return answer

    def _channels(self, params: JsonDict) -> frozenset[str]:
        """The conversation a call names, as sent (and, for a user id, their DM's id), for the
        faults scripted for one conversation; empty when it names none. Nothing is created."""
        named = params.get("channel")
        if not isinstance(named, str) or not named:
            return frozenset()
        with self.ctx.state.lock:
            user = named in self.ctx.workspace.users
        return frozenset({named, "D" + named[1:]}) if user else frozenset({named})

    def _answer(
        self, method: str, params: JsonDict, token: str | None, headers: dict[str, str]
    ) -> HttpAnswer:
        scripted = self.ctx.faults.take(method, self._channels(params))
        if scripted is not None:
            if scripted.delay:
                time.sleep(scripted.delay)
            if scripted.body is not None:
                return HttpAnswer(scripted.status, dict(scripted.body), dict(scripted.headers))
        handler = self.handlers.get(method)
        if handler is None:
            raise ApiError("unknown_method", req_method=method)
        self._authorize(method, token)
        body = handler(ApiRequest(method, params, token, headers))
        return HttpAnswer(200, body, drop=scripted is not None and scripted.drop)
