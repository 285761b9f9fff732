"""Pure parsing of Kandev's MCP wire: JSON / SSE replies, tool results and tool error texts."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from kandev_slack.kandev.errors import (
    KandevConflictError,
    KandevNotFoundError,
    KandevProtocolError,
    KandevToolError,
    KandevValidationError,
)

_BACKEND_ERROR = re.compile(
    r"^backend error(?: \[(?P<code>[A-Za-z0-9_]+)\])?:\s*(?P<message>.*)$", re.S
)
_SCHEMA_ERROR = re.compile(r"^invalid arguments for \S+:", re.S)
_ERROR_CLASSES: dict[str, type[KandevToolError]] = {
    "VALIDATION_ERROR": KandevValidationError,
    "NOT_FOUND": KandevNotFoundError,
    "CONFLICT": KandevConflictError,
}


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (``event: message`` blocks; other events are skipped).

    Blocks are separated by blank lines; several ``data:`` lines of one block are joined with
    newlines; comment lines (``:``) and unparsable data are ignored.
    """
    messages: list[dict[str, Any]] = []
    event = "message"
    data: list[str] = []

    def flush() -> None:
        if data and event == "message":
            try:
                parsed = json.loads("\n".join(data))
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                messages.append(parsed)

    for raw_line in text.splitlines():
        line = raw_line.rstrip("\r")
        if not line:
            flush()
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            event = value or "message"
        elif field == "data":
            data.append(value)
    flush()
    return messages


def parse_messages(content_type: str, body: str) -> list[dict[str, Any]]:
    """All JSON-RPC messages in an MCP HTTP reply, whether JSON (one or a batch) or SSE."""
    if "text/event-stream" in content_type.lower():
        return parse_sse(body)
    try:
        parsed = json.loads(body)
    except ValueError as exc:
        raise KandevProtocolError(f"MCP reply is not JSON: {body[:200]!r}") from exc
    if isinstance(parsed, dict):
        return [parsed]
    if isinstance(parsed, list):
        return [m for m in parsed if isinstance(m, dict)]
    raise KandevProtocolError(f"MCP reply is not a JSON-RPC message: {body[:200]!r}")


def pick_reply(messages: list[dict[str, Any]], request_id: int | str) -> dict[str, Any]:
    """The response to ``request_id`` among ``messages`` (notifications and others skipped)."""
    for message in messages:
        if message.get("id") == request_id and ("result" in message or "error" in message):
            return message
    raise KandevProtocolError(f"MCP reply holds no response to request {request_id!r}")


def result_of(reply: dict[str, Any]) -> dict[str, Any]:
    """The ``result`` of a JSON-RPC response; a JSON-RPC ``error`` is a protocol error."""
    if "error" in reply:
        error = reply["error"] or {}
        raise KandevProtocolError(
            f"MCP error {error.get('code')}: {error.get('message', '')}".rstrip()
        )
    result = reply.get("result")
    if not isinstance(result, dict):
        raise KandevProtocolError(f"MCP response has no result object: {reply!r:.200}")
    return result


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one ``tools/call``: its text, and whether the tool reported an error."""

    text: str
    is_error: bool = False
    maybe_duplicate: bool = False

    @classmethod
    def from_result(cls, result: dict[str, Any], *, maybe_duplicate: bool = False) -> ToolResult:
        content = result.get("content") or []
        texts = [
            c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"
        ]
        return cls(
            text="\n".join(texts),
            is_error=bool(result.get("isError")),
            maybe_duplicate=maybe_duplicate,
        )

    def error(self) -> KandevToolError:
        """The typed exception for an ``isError`` result."""
        return tool_error(self.text)

    def json(self) -> Any:
        """The JSON payload of a successful result; raises the typed tool error otherwise."""
        if self.is_error:
            raise self.error()
        try:
            return json.loads(self.text)
        except ValueError as exc:
            raise KandevProtocolError(f"tool result is not JSON: {self.text[:200]!r}") from exc


def tool_error(text: str) -> KandevToolError:
    """Map an ``isError`` text to its exception.

    ``backend error [CODE]: message`` → by CODE (unknown codes → :class:`KandevToolError`);
    ``invalid arguments for <tool>: …`` (a schema violation) → :class:`KandevValidationError`.
    """
    text = text.strip()
    match = _BACKEND_ERROR.match(text)
    if match:
        code = match.group("code") or "BACKEND_ERROR"
        return _ERROR_CLASSES.get(code, KandevToolError)(code, match.group("message").strip())
    if _SCHEMA_ERROR.match(text):
        return KandevValidationError("VALIDATION_ERROR", text)
    return KandevToolError("UNKNOWN", text)
