"""A scripted stand-in for Kandev's /mcp endpoint, for respx (records what the client sent)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

ToolHandler = Callable[[dict[str, Any]], Any]


class FakeMcp:
    """Answers initialize / notifications / tools/call; tools answer JSON, errors or SSE."""

    def __init__(self, tools: dict[str, ToolHandler] | None = None, *, sse: bool = False):
        self.tools = tools or {}
        self.sse = sse
        self.sessions: list[str] = []
        self.valid_sessions: set[str] = set()
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.requests: list[httpx.Request] = []

    def expire_sessions(self) -> None:
        self.valid_sessions.clear()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        message = json.loads(request.content)
        method = message.get("method")
        if method == "initialize":
            session = f"mcp-session-{len(self.sessions) + 1}"
            self.sessions.append(session)
            self.valid_sessions.add(session)
            result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {}}
            return self._reply(message["id"], result, headers={"Mcp-Session-Id": session})
        if request.headers.get("Mcp-Session-Id") not in self.valid_sessions:
            return httpx.Response(404, text="Invalid session ID\n")
        if method == "notifications/initialized":
            return httpx.Response(202)
        assert method == "tools/call", method
        name, arguments = message["params"]["name"], message["params"]["arguments"]
        self.calls.append((name, arguments))
        outcome = self.tools[name](arguments)
        if isinstance(outcome, httpx.Response):
            return outcome
        if isinstance(outcome, ToolError):
            result = {"content": [{"type": "text", "text": outcome.text}], "isError": True}
        else:
            result = {"content": [{"type": "text", "text": json.dumps(outcome)}]}
        return self._reply(message["id"], result)

    def _reply(self, request_id, result, headers=None) -> httpx.Response:
        reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
        if not self.sse:
            return httpx.Response(200, json=reply, headers=headers)
        body = (
            "event: message\n"
            'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n'
            f"event: message\ndata: {json.dumps(reply)}\n\n"
        )
        return httpx.Response(
            200, text=body, headers={"Content-Type": "text/event-stream", **(headers or {})}
        )


class ToolError:
    def __init__(self, text: str):
        self.text = text
