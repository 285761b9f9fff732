"""A tiny stand-in for Slack's Web API (auth.test, conversations.info, apps.connections.open).

Only what `kandev-slack check` calls, answering with Slack's real response shapes. It runs on
127.0.0.1 in a thread and records every call (method, token) for assertions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


@dataclass
class SlackStub:
    bot_token: str
    app_token: str
    scopes: list[str] = field(default_factory=lambda: ["chat:write", "commands", "channels:read"])
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)
    users: set[str] = field(default_factory=set)  # who conversations.open can open a DM with
    url: str = ""

    def add_channel(self, channel_id: str, name: str, **flags: Any) -> None:
        self.channels[channel_id] = {
            "id": channel_id,
            "name": name,
            "is_channel": True,
            "is_group": False,
            "is_im": False,
            "is_private": False,
            "is_archived": False,
            "is_general": False,
            "is_member": True,
            "created": 1700000000,
            "creator": "U0CREATOR",
            "name_normalized": name,
            **flags,
        }

    def answer(self, method: str, token: str, form: dict[str, str]) -> tuple[dict, dict]:
        self.calls.append((method, token))
        if method == "auth.test":
            if token != self.bot_token:
                return {"ok": False, "error": "invalid_auth"}, {}
            scopes = {"x-oauth-scopes": ",".join(self.scopes)}
            return {
                "ok": True,
                "url": "https://acme.slack.com/",
                "team": "Acme",
                "user": "kandev",
                "team_id": "T0ACME",
                "user_id": "U0BOT",
                "bot_id": "B0BOT",
                "is_enterprise_install": False,
            }, scopes
        if method == "apps.connections.open":
            if token == self.bot_token:
                return {"ok": False, "error": "not_allowed_token_type"}, {}
            if token != self.app_token:
                return {"ok": False, "error": "invalid_auth"}, {}
            return {"ok": True, "url": "wss://wss-primary.slack.com/link/?ticket=t-1&app_id=A0"}, {}
        if method == "conversations.info":
            if token != self.bot_token:
                return {"ok": False, "error": "invalid_auth"}, {}
            if "channels:read" not in self.scopes:
                return {
                    "ok": False,
                    "error": "missing_scope",
                    "needed": "channels:read",
                    "provided": ",".join(self.scopes),
                }, {}
            channel = self.channels.get(form.get("channel", ""))
            if channel is None:
                return {"ok": False, "error": "channel_not_found"}, {}
            return {"ok": True, "channel": channel}, {}
        if method == "conversations.open":
            if "im:write" not in self.scopes:
                return {"ok": False, "error": "missing_scope", "needed": "im:write"}, {}
            user = form.get("users", "")
            if user not in self.users:
                return {"ok": False, "error": "user_not_found"}, {}
            return {"ok": True, "channel": {"id": "D" + user[1:]}}, {}
        return {"ok": False, "error": "unknown_method"}, {}


@contextmanager
def running(stub: SlackStub) -> Iterator[SlackStub]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            kind = self.headers.get("Content-Type", "")
            if kind.startswith("application/json"):
                form = json.loads(body or "{}")
            else:
                form = {k: v[0] for k, v in parse_qs(body).items()}
            auth = self.headers.get("Authorization", "")
            token = auth.removeprefix("Bearer ") or form.get("token", "")
            data, headers = stub.answer(self.path.rsplit("/", 1)[-1], token, form)
            payload = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/api/"
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
