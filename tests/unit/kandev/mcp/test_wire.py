"""Parsing of Kandev's MCP replies: JSON and SSE bodies, tool results and tool error texts."""

import pytest

from kandev_slack.kandev.errors import (
    KandevConflictError,
    KandevNotFoundError,
    KandevProtocolError,
    KandevToolError,
    KandevValidationError,
)
from kandev_slack.kandev.mcp.wire import (
    ToolResult,
    parse_messages,
    parse_sse,
    pick_reply,
    tool_error,
)

SSE_WITH_NOTIFICATION_FIRST = (
    "event: message\n"
    'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
    "\n"
    "event: message\n"
    'data: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{}"}]}}\n'
    "\n"
)


def test_sse_yields_every_message_block_in_order():
    messages = parse_sse(SSE_WITH_NOTIFICATION_FIRST)
    assert [m.get("method") for m in messages] == ["notifications/tools/list_changed", None]
    assert messages[1]["id"] == 7


def test_sse_joins_multiline_data_and_skips_comments_other_events_and_garbage():
    body = (
        ": keep-alive\r\n"
        "event: endpoint\r\n"
        "data: /mcp?x=1\r\n"
        "\r\n"
        "data: not json\r\n"
        "\r\n"
        "id: 3\r\n"
        'data: {"jsonrpc":"2.0",\r\n'
        'data:"id":1,"result":{}}\r\n'
    )
    assert parse_sse(body) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_pick_reply_matches_the_request_id_among_notifications():
    reply = pick_reply(parse_messages("text/event-stream", SSE_WITH_NOTIFICATION_FIRST), 7)
    assert reply["result"]["content"][0]["text"] == "{}"
    with pytest.raises(KandevProtocolError):
        pick_reply(parse_messages("text/event-stream", SSE_WITH_NOTIFICATION_FIRST), 8)


def test_json_bodies_single_and_batch():
    assert parse_messages("application/json", '{"id":1,"result":{}}') == [{"id": 1, "result": {}}]
    batch = '[{"method":"x"},{"id":2,"result":{}}]'
    assert pick_reply(parse_messages("application/json; charset=utf-8", batch), 2) == {
        "id": 2,
        "result": {},
    }
    with pytest.raises(KandevProtocolError):
        parse_messages("application/json", "<html>")


@pytest.mark.parametrize(
    ("text", "cls", "code", "message"),
    [
        (
            'backend error [VALIDATION_ERROR]: answer 1 references unknown option_id "nope"',
            KandevValidationError,
            "VALIDATION_ERROR",
            'answer 1 references unknown option_id "nope"',
        ),
        (
            "backend error [NOT_FOUND]: clarification request not found",
            KandevNotFoundError,
            "NOT_FOUND",
            "clarification request not found",
        ),
        (
            "backend error [CONFLICT]: clarification request is no longer active",
            KandevConflictError,
            "CONFLICT",
            "clarification request is no longer active",
        ),
        ("backend error [INTERNAL]: boom", KandevToolError, "INTERNAL", "boom"),
        ("backend error: plain failure", KandevToolError, "BACKEND_ERROR", "plain failure"),
        (
            "invalid arguments for answer_question_kandev: validation failed at /answers "
            "(keyword: type)",
            KandevValidationError,
            "VALIDATION_ERROR",
            "invalid arguments for answer_question_kandev: validation failed at /answers "
            "(keyword: type)",
        ),
        ("something else", KandevToolError, "UNKNOWN", "something else"),
    ],
)
def test_tool_error_texts_map_to_typed_errors(text, cls, code, message):
    error = tool_error(text)
    assert type(error) is cls
    assert (error.code, error.message) == (code, message)


def test_tool_result_json_and_error():
    ok = ToolResult.from_result({"content": [{"type": "text", "text": '{"count": 0}'}]})
    assert ok.json() == {"count": 0}
    failed = ToolResult.from_result(
        {"content": [{"type": "text", "text": "backend error [NOT_FOUND]: gone"}], "isError": True}
    )
    assert failed.is_error
    with pytest.raises(KandevNotFoundError, match="gone"):
        failed.json()
    with pytest.raises(KandevProtocolError):
        ToolResult(text="not json").json()


def test_lower_case_backend_codes_keep_their_code():
    # Kandev's permission tools answer lower-case codes (kandev-permissions.md §3).
    error = tool_error(
        "backend error [permission_already_resolved]: Permission request was already resolved"
    )

    assert (error.code, error.message) == (
        "permission_already_resolved",
        "Permission request was already resolved",
    )
