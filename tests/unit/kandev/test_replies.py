"""A reply validated straight from its bytes (``validated_200``): the model's fields only, and
the same protocol errors as decoding it in two steps."""

from __future__ import annotations

import json

import httpx
import pytest

from kandev_slack.kandev.approvals.wire import WorkspaceTaskPage
from kandev_slack.kandev.errors import KandevProtocolError
from kandev_slack.kandev.replies import validated_200

REQUEST = httpx.Request("GET", "http://kandev.test/api/v1/workspaces/w1/tasks")


def reply(status: int, body: bytes) -> httpx.Response:
    return httpx.Response(status, content=body, request=REQUEST)


def test_a_page_of_tasks_keeps_only_what_the_sweep_reads() -> None:
    task = {
        "id": "t1",
        "primary_session_id": "s1",
        "task_pending_action": "permission",
        "updated_at": "2026-12-06T08:00:00Z",
        "description": "x" * 10_000,  # Kandev's task carries much more than the sweep reads
        "metadata": {"anything": [1, 2, 3]},
    }
    page = validated_200(
        WorkspaceTaskPage, reply(200, json.dumps({"tasks": [task], "total": 1}).encode())
    )
    [state] = page.states()
    assert (state.task_id, state.session_id, state.flagged) == ("t1", "s1", True)
    assert page.total == 1


def test_a_body_that_is_not_json_is_a_protocol_error_quoting_it() -> None:
    with pytest.raises(KandevProtocolError, match="non-JSON reply: '<html>bad gateway"):
        validated_200(WorkspaceTaskPage, reply(200, b"<html>bad gateway</html>"))


def test_json_of_another_shape_is_a_protocol_error_naming_the_model() -> None:
    with pytest.raises(KandevProtocolError, match="unexpected WorkspaceTaskPage shape"):
        validated_200(WorkspaceTaskPage, reply(200, b'{"tasks": [{"id": ""}]}'))


def test_a_reply_other_than_200_is_refused_before_its_body_is_read() -> None:
    with pytest.raises(KandevProtocolError, match="answered HTTP 500"):
        validated_200(WorkspaceTaskPage, reply(500, b'{"tasks": []}'))
