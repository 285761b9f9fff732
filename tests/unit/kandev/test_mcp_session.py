"""The MCP session: initialise once, JSON and SSE replies, transparent re-initialise."""

import json
import threading

import httpx
import pytest
import respx

from kandev_slack.kandev.errors import KandevAuthError, KandevProtocolError, KandevValidationError
from kandev_slack.kandev.http import KandevHttp
from kandev_slack.kandev.mcp.session import McpSession
from tests.unit.kandev.fake_mcp import FakeMcp, ToolError

BASE = "http://kandev.test"


def session(token=None) -> McpSession:
    return McpSession(KandevHttp(BASE, token, retry_initial_wait=0.001, retry_max_wait=0.01))


@pytest.mark.parametrize("sse", [False, True])
@respx.mock
def test_initialises_once_then_calls_tools_with_the_session_id(sse):
    fake = FakeMcp({"echo": lambda args: {"got": args}}, sse=sse)
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    mcp = session(token="kandev_pat_t")
    assert mcp.call_tool_json("echo", {"a": 1}) == {"got": {"a": 1}}
    assert mcp.call_tool_json("echo", {"a": 2}) == {"got": {"a": 2}}
    assert fake.sessions == ["mcp-session-1"]
    first = fake.requests[0]
    assert b'"protocolVersion":"2025-06-18"' in first.content.replace(b" ", b"")
    assert "text/event-stream" in first.headers["Accept"]
    assert "application/json" in first.headers["Accept"]
    assert all(r.headers["Authorization"] == "Bearer kandev_pat_t" for r in fake.requests)
    assert b"notifications/initialized" in fake.requests[1].content
    assert fake.requests[2].headers["Mcp-Session-Id"] == "mcp-session-1"


@respx.mock
def test_reinitialises_transparently_when_the_session_is_refused():
    fake = FakeMcp({"echo": lambda args: args})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    mcp = session()
    mcp.call_tool_json("echo", {})
    fake.expire_sessions()
    assert mcp.call_tool_json("echo", {"again": True}) == {"again": True}
    assert fake.sessions == ["mcp-session-1", "mcp-session-2"]
    assert mcp.session_id == "mcp-session-2"


@respx.mock
def test_concurrent_first_calls_share_one_session():
    fake = FakeMcp({"echo": lambda args: args})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    mcp = session()
    threads = [threading.Thread(target=mcp.call_tool_json, args=("echo", {})) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fake.sessions == ["mcp-session-1"]
    assert len(fake.calls) == 8


@respx.mock
def test_tool_errors_are_typed_and_http_errors_are_mapped():
    fake = FakeMcp(
        {
            "bad": lambda args: ToolError("backend error [VALIDATION_ERROR]: cursor: malformed"),
            "teapot": lambda args: httpx.Response(418, text="no"),
            "locked": lambda args: httpx.Response(401, json={"error": "authentication required"}),
        }
    )
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    mcp = session()
    with pytest.raises(KandevValidationError, match="malformed"):
        mcp.call_tool_json("bad", {})
    with pytest.raises(KandevProtocolError, match="418"):
        mcp.call_tool_json("teapot", {})
    with pytest.raises(KandevAuthError):
        mcp.call_tool_json("locked", {})


@respx.mock
def test_initialize_without_session_header_is_a_protocol_error():
    respx.post(f"{BASE}/mcp").respond(200, json={"jsonrpc": "2.0", "id": 1, "result": {}})
    with pytest.raises(KandevProtocolError, match="Mcp-Session-Id"):
        session().call_tool_json("x", {})


@respx.mock
def test_jsonrpc_error_is_a_protocol_error():
    fake = FakeMcp()

    def handler(request: httpx.Request) -> httpx.Response:
        message = json.loads(request.content)
        if message.get("method") == "tools/call":
            error = {"code": -32602, "message": "no tool"}
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "error": error})
        return fake(request)

    respx.post(f"{BASE}/mcp").mock(side_effect=handler)
    with pytest.raises(KandevProtocolError, match="-32602"):
        session().call_tool_json("missing", {})
