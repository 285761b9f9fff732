"""A tiny client for Kandev's external MCP endpoint (``POST /mcp``), independent of
``kandev_slack/``."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx

from .mock_agent import parse_messages

PROTOCOL_VERSION = "2025-06-18"
ACCEPT = "application/json, text/event-stream"


class McpToolError(RuntimeError):
    """A tool call answered with ``isError: true``."""

    def __init__(self, tool: str, text: str) -> None:
        super().__init__(f"{tool}: {text}")
        self.tool = tool
        self.text = text


class McpSession:
    """Initialize once, call tools, re-initialize when Kandev forgets the session."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0) -> None:
        headers = {"Accept": ACCEPT}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout)
        self._session_id: str | None = None
        self._next_id = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call ``name`` and return its result text parsed as JSON (or the raw text)."""
        with self._lock:
            if self._session_id is None:
                self._initialize()
            response = self._post_request(
                "tools/call", {"name": name, "arguments": arguments or {}}
            )
            if response is None:
                self._initialize()
                response = self._post_request(
                    "tools/call", {"name": name, "arguments": arguments or {}}
                )
            if response is None:
                raise RuntimeError("Kandev MCP refused a freshly initialized session")
        result = response.get("result")
        if result is None:
            raise RuntimeError(f"MCP {name}: JSON-RPC error {response.get('error')!r}")
        content = result.get("content") or []
        text = content[0].get("text", "") if content else ""
        if result.get("isError"):
            raise McpToolError(name, text)
        try:
            return json.loads(text)
        except ValueError:
            return text

    def _initialize(self) -> None:
        self._session_id = None
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "kandev-slack-test-harness", "version": "1"},
        }
        reply = self._post_request("initialize", params)
        if reply is None or "result" not in reply:
            raise RuntimeError(f"MCP initialize failed: {reply!r}")
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _post_request(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """Send a request; ``None`` when Kandev no longer knows the MCP session (HTTP 404)."""
        self._next_id += 1
        request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        response = self._post(message)
        if response.status_code == 404 and method != "initialize":
            return None
        response.raise_for_status()
        session_id = response.headers.get("Mcp-Session-Id")
        if session_id:
            self._session_id = session_id
        for reply in parse_messages(response.headers.get("Content-Type", ""), response.text):
            if reply.get("id") == request_id:
                return reply
        raise RuntimeError(
            f"MCP {method}: no reply with id {request_id} in {response.text[:500]!r}"
        )

    def _post(self, message: dict[str, Any]) -> httpx.Response:
        headers = {"Mcp-Session-Id": self._session_id} if self._session_id else {}
        return self._http.post("/mcp", json=message, headers=headers)
