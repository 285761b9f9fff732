"""A client session with Kandev's external MCP server (streamable HTTP, JSON-RPC 2.0).

The session is initialised lazily (``initialize`` → ``Mcp-Session-Id`` →
``notifications/initialized``) and shared by every thread. When Kandev refuses the session id
(HTTP 404 "Invalid session ID"), it is re-initialised once, transparently.
"""

from __future__ import annotations

import itertools
import logging
import threading
from typing import Any

from kandev_slack.kandev.errors import KandevProtocolError
from kandev_slack.kandev.http import Exchange, KandevHttp
from kandev_slack.kandev.mcp.wire import ToolResult, parse_messages, pick_reply, result_of

log = logging.getLogger(__name__)

PROTOCOL_VERSION = "2025-06-18"
MCP_PATH = "/mcp"
SESSION_HEADER = "Mcp-Session-Id"
_ACCEPT = "application/json, text/event-stream"
_CLIENT_INFO = {"name": "kandev-slack", "version": "0.1.0"}


class McpSession:
    """Calls MCP tools on one Kandev server; thread-safe."""

    def __init__(self, http: KandevHttp, *, path: str = MCP_PATH):
        self._http = http
        self._path = path
        self._ids = itertools.count(1)
        self._ids_lock = threading.Lock()
        self._session_lock = threading.Lock()
        self._session_id: str | None = None

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        retry: bool = True,
    ) -> ToolResult:
        """Call a tool. ``isError`` results are returned (see :meth:`ToolResult.json`).
        ``retry=False``: one attempt only, for a call that must never be re-sent blindly."""
        params = {"name": name, "arguments": arguments}
        exchange, request_id = self._request("tools/call", params, timeout=timeout, retry=retry)
        reply = self._reply(exchange, request_id)
        return ToolResult.from_result(result_of(reply), maybe_duplicate=exchange.maybe_duplicate)

    def call_tool_json(
        self, name: str, arguments: dict[str, Any], *, timeout: float | None = None
    ) -> Any:
        """Call a tool and return its JSON payload; tool errors raise typed exceptions."""
        return self.call_tool(name, arguments, timeout=timeout).json()

    def initialize(self) -> str:
        """Open a new session now (normally done lazily) and return its id."""
        with self._session_lock:
            self._session_id = None
            return self._ensure_session_locked()

    # ---- internals ------------------------------------------------------------------

    def _next_id(self) -> int:
        with self._ids_lock:
            return next(self._ids)

    def _request(
        self, method: str, params: dict[str, Any], *, timeout: float | None, retry: bool = True
    ) -> tuple[Exchange, int]:
        session_id = self._ensure_session()
        request_id = self._next_id()
        exchange = self._post(method, params, request_id, session_id, timeout=timeout, retry=retry)
        if _session_refused(exchange):
            # Refused before any work: sending it again on a new session is safe.
            log.info("Kandev refused MCP session %s; re-initialising", session_id)
            session_id = self._renew_session(session_id)
            request_id = self._next_id()
            exchange = self._post(
                method, params, request_id, session_id, timeout=timeout, retry=retry
            )
        return exchange, request_id

    def _post(
        self,
        method: str,
        params: dict[str, Any] | None,
        request_id: int | None,
        session_id: str | None,
        *,
        timeout: float | None = None,
        retry: bool = True,
    ) -> Exchange:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if request_id is not None:
            message["id"] = request_id
        if params is not None:
            message["params"] = params
        headers = {"Accept": _ACCEPT}
        if session_id:
            headers[SESSION_HEADER] = session_id
        name = params.get("name") if params is not None and method == "tools/call" else None
        return self._http.request(
            "POST",
            self._path,
            json=message,
            headers=headers,
            timeout=timeout,
            retry=retry,
            call=f"mcp {name if isinstance(name, str) else method}",
        )

    def _reply(self, exchange: Exchange, request_id: int) -> dict[str, Any]:
        response = exchange.response
        if response.status_code != 200:
            raise KandevProtocolError(
                f"MCP answered HTTP {response.status_code}: {response.text[:200]!r}"
            )
        messages = parse_messages(response.headers.get("content-type", ""), response.text)
        return pick_reply(messages, request_id)

    def _ensure_session(self) -> str:
        session_id = self._session_id
        if session_id:
            return session_id
        with self._session_lock:
            return self._ensure_session_locked()

    def _renew_session(self, refused: str) -> str:
        with self._session_lock:
            if self._session_id == refused:
                self._session_id = None
            return self._ensure_session_locked()

    def _ensure_session_locked(self) -> str:
        if self._session_id:
            return self._session_id
        request_id = self._next_id()
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": _CLIENT_INFO,
        }
        exchange = self._post("initialize", params, request_id, None)
        result_of(self._reply(exchange, request_id))
        session_id = exchange.response.headers.get(SESSION_HEADER)
        if not session_id:
            raise KandevProtocolError("MCP initialize returned no Mcp-Session-Id header")
        done = self._post("notifications/initialized", None, None, session_id)
        if done.response.status_code >= 400:
            raise KandevProtocolError(
                f"MCP notifications/initialized answered HTTP {done.response.status_code}"
            )
        self._session_id = session_id
        log.debug("MCP session %s initialised", session_id)
        return session_id


def _session_refused(exchange: Exchange) -> bool:
    response = exchange.response
    return response.status_code == 404 and "invalid session" in response.text.lower()
