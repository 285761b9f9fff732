"""Tool-permission requests: parsing Kandev's recorded JSON (kandev-permissions.md) and the
reply → outcome table, through the client on a scripted /mcp (respx)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import respx

from kandev_slack.kandev import models
from kandev_slack.kandev.approvals.outcomes import (
    AgentStarting,
    AuthRefused,
    KandevUnreachable,
    OptionNotOffered,
    PermissionLost,
    PermissionWithdrawn,
    PermissionWon,
    ReadTranscript,
    ResolveRefused,
    ResolveUnsettled,
    TaskOrSessionGone,
    classify,
    settle,
)
from kandev_slack.kandev.approvals.wire import PermissionList, PermissionPage
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevAgentStarting, KandevNotFoundError, KandevProtocolError
from kandev_slack.kandev.mcp.wire import ToolResult
from tests.unit.kandev.fake_mcp import FakeMcp, ToolError

BASE = "http://kandev.test"
TASK = "424a2452-b211-4d5a-936c-c1e7fe0fc461"
SESSION = "f4bb9e53-097b-4705-ad1c-0333f4eddabc"
REQUEST = "120883fe-bae5-4e1d-be0e-8f0735bfdb2e"
PENDING = "fake-session-18957-1-fake-perm-18957-1-1796154445815871366"
OPTIONS = [
    {"kind": "allow_once", "name": "Allow once", "option_id": "allow_once"},
    {"kind": "allow_always", "name": "Always allow", "option_id": "allow_always"},
    {"kind": "reject_once", "name": "Reject", "option_id": "reject_once"},
    {"kind": "reject_always", "name": "Always reject", "option_id": "reject_always"},
]
# §2, as Kandev v0.95.1 listed it.
LISTED: dict[str, Any] = {
    "action": {
        "command": "rm -rf build",
        "cwd": "/repo/app",
        "description": "Run rm -rf build",
        "redacted": False,
        "type": "command",
    },
    "created_at": "2026-12-01T19:47:25.815957714Z",
    "options": OPTIONS,
    "pending_id": PENDING,
    "request_id": REQUEST,
    "session_id": SESSION,
    "status": "pending",
    "task_id": TASK,
    "title": "Run rm -rf build",
    "tool_call_id": "fake-perm-18957-1",
}
FETCH_ACTION = {
    "type": "network",
    "destination": "https://example.com/api",
    "description": "Fetch https://example.com/api?[redacted]",
    "redacted": True,
}
RESOLVED = {
    "option_id": "allow_once",
    "option_kind": "allow_once",
    "pending_id": PENDING,
    "request_id": REQUEST,
    "session_id": SESSION,
    "source": "external_mcp",
    "status": "resolved",
    "task_id": TASK,
}
SELECTED_AT = datetime(2026, 12, 1, 19, 47, 46, 820834, tzinfo=UTC)


def resolution(option: str = "reject_once", source: str = "web", **extra: Any) -> dict[str, Any]:
    return {
        "actor_kind": "synthetic",
        "actor_user_id": "default-user",
        "claim_id": "6c560bb0-0000-0000-0000-000000000000",
        "finalized_at": "2026-12-01T19:47:46.824709583Z",
        "option_id": option,
        "option_kind": option,
        "pending_id": PENDING,
        "request_id": REQUEST,
        "result": "accepted",
        "selected_at": "2026-12-01T19:47:46.820834439Z",
        "source": source,
        **extra,
    }


def message(status: str | None = None, resolved: dict[str, Any] | None = None) -> dict[str, Any]:
    """A §4 ``permission_request`` message (the tool-call title is in ``content``)."""
    metadata: dict[str, Any] = {
        "action_details": {
            "description": "Run rm -rf build",
            "raw_input": {"command": "rm -rf build", "cwd": "/repo/app"},
        },
        "action_type": "command",
        "options": OPTIONS,
        "pending_id": PENDING,
        "request_id": REQUEST,
        "tool_call_id": "fake-perm-18957-1",
    }
    if status is not None:
        metadata["status"] = status
    if resolved is not None:
        metadata["permission_resolution"] = resolved
    return {
        "id": "0c33c7cb-0000-0000-0000-000000000000",
        "session_id": SESSION,
        "task_id": TASK,
        "type": "permission_request",
        "content": "Run rm -rf build",
        "metadata": metadata,
        "created_at": "2026-12-01T19:47:25.831515239Z",
        "updated_at": "2026-12-01T19:47:25.831515239Z",
    }


def backend_error(code: str, text: str = "said Kandev") -> ToolError:
    return ToolError(f"backend error [{code}]: {text}")


def make_client(tools: dict[str, Any], **kw: Any) -> tuple[KandevClient, FakeMcp]:
    fake = FakeMcp(tools)
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    return KandevClient(BASE, kw.pop("token", None), retry_max_wait=0.01, **kw), fake


def transcript(*messages: dict[str, Any]) -> Any:
    return lambda args: {"messages": list(messages), "has_more": False, "cursor": ""}


def already_resolved(recorded: dict[str, Any]) -> tuple[KandevClient, FakeMcp]:
    """A Kandev that answers every resolve with ``permission_already_resolved`` and whose
    transcript holds ``recorded``."""
    return make_client(
        {
            "resolve_agent_permission_kandev": lambda a: backend_error(
                "permission_already_resolved"
            ),
            "get_task_conversation_kandev": transcript(recorded),
        }
    )


def choice():
    return (
        PermissionList.model_validate({"permissions": [LISTED]}).permissions[0].choose("allow_once")
    )


def resolve_calls(fake: FakeMcp) -> int:
    return sum(1 for name, _ in fake.calls if name == "resolve_agent_permission_kandev")


# ---- parsing -------------------------------------------------------------------------------


def test_a_listed_request_carries_the_ids_options_and_redacted_action():
    [request] = PermissionList.model_validate(
        {"permissions": [LISTED], "task_id": TASK, "total": 1}
    ).permissions

    assert (request.task_id, request.session_id, request.request_id, request.pending_id) == (
        TASK,
        SESSION,
        REQUEST,
        PENDING,
    )
    assert request.action.type == "command"
    assert (request.action.command, request.action.cwd) == ("rm -rf build", "/repo/app")
    assert [(o.option_id, o.always, o.allows) for o in request.options] == [
        ("allow_once", False, True),
        ("allow_always", True, True),
        ("reject_once", False, False),
        ("reject_always", True, False),
    ]
    assert request.created_at == datetime(2026, 12, 1, 19, 47, 25, 815957, tzinfo=UTC)
    assert not hasattr(request, "title")  # only the redacted action is carried


def test_a_fetch_request_keeps_only_the_redacted_destination():
    entry = {**LISTED, "action": FETCH_ACTION, "title": "Fetch https://example.com/api?[redacted]"}
    [request] = PermissionList.model_validate({"permissions": [entry]}).permissions

    assert request.action.destination == "https://example.com/api"
    assert request.action.redacted
    assert "token" not in request.model_dump_json()


def test_a_custom_option_is_passed_through():
    custom = {"kind": "allow_once", "name": "Yes, publish", "option_id": "opt-yes"}
    [request] = PermissionList.model_validate(
        {"permissions": [{**LISTED, "options": [custom]}]}
    ).permissions

    assert request.option("opt-yes") is not None
    assert request.option("allow_once") is None
    assert request.choose("opt-yes").tool_arguments() == {
        "task_id": TASK,
        "session_id": SESSION,
        "request_id": REQUEST,
        "pending_id": PENDING,
        "option_id": "opt-yes",
    }


def test_transcript_records_read_pending_resolved_and_expired():
    def record(msg):
        return PermissionPage.model_validate({"messages": [msg]}).record(REQUEST)

    pending = record(message())
    won = record(message("approved", resolution("allow_once", "external_mcp")))
    cancelled = record(message("expired", resolution("cancelled")))
    expired = record(message("expired"))

    assert pending is not None and not pending.claimed and not pending.withdrawn
    assert won is not None and won.status == "approved" and won.claimed
    assert won.resolution is not None and won.resolution.selected_at == SELECTED_AT
    assert cancelled is not None and cancelled.claimed and not cancelled.withdrawn
    assert expired is not None and expired.withdrawn
    assert PermissionPage.model_validate({"messages": [message()]}).record("other") is None


# ---- the reply → outcome table ----------------------------------------------------------


def error_result(code: str) -> ToolResult:
    return ToolResult(text=f"backend error [{code}]: said Kandev", is_error=True)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("permission_option_not_offered", OptionNotOffered("said Kandev")),
        ("permission_stale", PermissionWithdrawn("said Kandev")),
        ("permission_not_found", PermissionWithdrawn("said Kandev")),
        ("task_or_session_not_found", TaskOrSessionGone("said Kandev")),
        ("VALIDATION_ERROR", ResolveRefused("said Kandev")),
        ("permission_already_resolved", ReadTranscript("said Kandev", claimed=True)),
        ("permission_resolution_in_progress", ReadTranscript("said Kandev", claimed=True)),
        ("INTERNAL_ERROR", ReadTranscript("said Kandev", unclaimed=True)),
    ],
)
def test_each_error_code_has_its_outcome(code, expected):
    assert classify(error_result(code)) == expected


def test_a_success_wins_and_an_unknown_code_or_unreadable_success_reads_the_transcript():
    assert classify(ToolResult(text=json.dumps(RESOLVED))) == PermissionWon(
        "allow_once", "allow_once"
    )
    assert isinstance(classify(ToolResult(text="{}")), ReadTranscript)
    unknown = classify(error_result("SOMETHING_NEW"))
    assert isinstance(unknown, ReadTranscript) and not unknown.claimed
    schema = ToolResult(
        text="invalid arguments for resolve_agent_permission_kandev: validation failed",
        is_error=True,
    )
    assert isinstance(classify(schema), ResolveRefused)


# ---- the client -------------------------------------------------------------------------


@respx.mock
def test_list_pending_retries_while_the_agent_starts():
    replies = iter(
        [
            backend_error("INTERNAL_ERROR", "Agent permission operation failed"),
            {"permissions": [LISTED], "task_id": TASK, "total": 1},
        ]
    )
    c, fake = make_client({"list_pending_agent_permissions_kandev": lambda a: next(replies)})
    c.permissions._sleep = lambda _s: None

    [request] = c.permissions.list_pending(TASK, SESSION)

    assert request.request_id == REQUEST
    assert fake.calls[0] == (
        "list_pending_agent_permissions_kandev",
        {"task_id": TASK, "session_id": SESSION},
    )


@respx.mock
def test_list_pending_gives_up_on_a_lasting_internal_error_and_types_a_foreign_session():
    c, _ = make_client(
        {"list_pending_agent_permissions_kandev": lambda a: backend_error("INTERNAL_ERROR")}
    )
    c.permissions._sleep = lambda _s: None
    with pytest.raises(KandevAgentStarting):
        c.permissions.list_pending(TASK)

    c2, _ = make_client(
        {
            "list_pending_agent_permissions_kandev": lambda a: backend_error(
                "task_or_session_not_found"
            )
        }
    )
    with pytest.raises(KandevNotFoundError):
        c2.permissions.list_pending(TASK, "not-a-uuid")


@respx.mock
def test_resolve_wins_with_the_ids_sent_unchanged():
    c, fake = make_client({"resolve_agent_permission_kandev": lambda a: RESOLVED})

    outcome = c.permissions.resolve(choice())

    assert outcome == PermissionWon("allow_once", "allow_once")
    assert fake.calls == [
        (
            "resolve_agent_permission_kandev",
            {
                "task_id": TASK,
                "session_id": SESSION,
                "request_id": REQUEST,
                "pending_id": PENDING,
                "option_id": "allow_once",
            },
        )
    ]


@respx.mock
def test_a_loser_reads_the_winner_from_the_transcript():
    c, fake = already_resolved(message("rejected", resolution("reject_once", "web")))

    outcome = c.permissions.resolve(choice())

    assert isinstance(outcome, PermissionLost) and outcome.winner is not None
    assert (outcome.winner.option_id, outcome.winner.source) == ("reject_once", "web")
    assert resolve_calls(fake) == 1
    conversation = [a for n, a in fake.calls if n == "get_task_conversation_kandev"]
    assert conversation[0]["message_types"] == ["permission_request"]
    assert conversation[0]["session_id"] == SESSION


@respx.mock
def test_a_loser_to_the_same_option_is_still_a_loser_unless_it_may_be_our_own_resend():
    c, _ = already_resolved(message("approved", resolution("allow_once", "external_mcp")))
    before = SELECTED_AT - timedelta(seconds=5)

    lost = c.permissions.resolve(choice(), first_sent=before)
    ours = c.permissions.resolve(choice(), resend=True, first_sent=before)
    theirs = c.permissions.resolve(choice(), resend=True, first_sent=SELECTED_AT + timedelta(60))

    assert isinstance(lost, PermissionLost) and not lost.uncertain
    assert ours == PermissionWon("allow_once", "allow_once", settled=True)
    assert isinstance(theirs, PermissionLost) and not theirs.uncertain


@respx.mock
def test_a_lost_reply_is_settled_from_the_transcript_and_never_re_sent():
    def timeout(args):
        raise httpx.ReadTimeout("no reply")

    same = resolution("allow_once", "external_mcp")
    c, fake = make_client(
        {
            "resolve_agent_permission_kandev": timeout,
            "get_task_conversation_kandev": transcript(message("approved", same)),
        }
    )

    outcome = c.permissions.resolve(choice(), first_sent=SELECTED_AT - timedelta(seconds=2))

    assert outcome == PermissionWon("allow_once", "allow_once", settled=True)
    assert resolve_calls(fake) == 1


@respx.mock
def test_a_lost_reply_with_nothing_recorded_yet_stays_unsettled():
    def timeout(args):
        raise httpx.ReadTimeout("no reply")

    c, fake = make_client(
        {
            "resolve_agent_permission_kandev": timeout,
            "get_task_conversation_kandev": transcript(message()),
        }
    )

    outcome = c.permissions.resolve(choice())

    assert outcome == ResolveUnsettled(outcome.reason, still_pending=True)
    assert resolve_calls(fake) == 1


@respx.mock
def test_an_internal_error_with_nothing_recorded_is_transient_and_expired_is_withdrawn():
    c, _ = make_client(
        {
            "resolve_agent_permission_kandev": lambda a: backend_error("INTERNAL_ERROR"),
            "get_task_conversation_kandev": transcript(message()),
        }
    )
    assert isinstance(c.permissions.resolve(choice()), AgentStarting)

    c2, _ = make_client(
        {
            "resolve_agent_permission_kandev": lambda a: backend_error("INTERNAL_ERROR"),
            "get_task_conversation_kandev": transcript(message("expired")),
        }
    )
    assert isinstance(c2.permissions.resolve(choice()), PermissionWithdrawn)


@respx.mock
def test_unreachable_is_an_outcome_and_the_resolve_was_tried_once():
    route = respx.post(f"{BASE}/mcp").mock(side_effect=httpx.ConnectError("refused"))
    c = KandevClient(BASE, retry_max_wait=0.01, retry_attempts=2)

    assert isinstance(c.permissions.resolve(choice()), KandevUnreachable)
    assert route.call_count == 2  # the session's initialize, retried: nothing was resolved


@respx.mock
def test_auth_refused_is_an_outcome():
    respx.post(f"{BASE}/mcp").mock(return_value=httpx.Response(401, json={"error": "auth"}))
    c = KandevClient(BASE, "bad", retry_max_wait=0.01)

    assert isinstance(c.permissions.resolve(choice()), AuthRefused)


@respx.mock
def test_record_follows_pages_and_an_unknown_task_has_none():
    pages = iter(
        [
            {"messages": [], "has_more": True, "cursor": "m-9"},
            {"messages": [message("approved", resolution())], "has_more": False, "cursor": ""},
        ]
    )
    c, fake = make_client({"get_task_conversation_kandev": lambda a: next(pages)})

    record = c.permissions.record(TASK, SESSION, REQUEST)

    assert record is not None and record.status == "approved"
    assert [a.get("before") for n, a in fake.calls] == [None, "m-9"]

    c2, _ = make_client({"get_task_conversation_kandev": lambda a: backend_error("NOT_FOUND")})
    assert c2.permissions.record(TASK, SESSION, REQUEST) is None


@respx.mock
def test_cancellation_reads_the_sessions_revision():
    respx.get(f"{BASE}/api/v1/task-sessions/{SESSION}").mock(
        return_value=httpx.Response(
            200,
            json={
                "session": {
                    "id": SESSION,
                    "state": "WAITING_FOR_INPUT",
                    "cancellation_pending": False,
                    "cancellation_revision": 2,
                }
            },
        )
    )
    respx.get(f"{BASE}/api/v1/task-sessions/gone").mock(return_value=httpx.Response(404))
    respx.get(f"{BASE}/api/v1/task-sessions/odd").mock(
        return_value=httpx.Response(200, json={"sessions": []})
    )
    c = KandevClient(BASE, retry_max_wait=0.01)

    found = c.permissions.cancellation(SESSION)

    assert found is not None and (found.revision, found.pending) == (2, False)
    assert c.permissions.cancellation("gone") is None
    with pytest.raises(KandevProtocolError):
        c.permissions.cancellation("odd")


def workspace_task(task_id: str, pending: str | None, session: str | None = "s") -> dict:
    """A task of ``GET /api/v1/workspaces/{id}/tasks`` (the keys the sweep reads)."""
    return {
        "id": task_id,
        "state": "REVIEW",
        "primary_session_id": session,
        "primary_session_state": "WAITING_FOR_INPUT",
        "primary_session_pending_action": pending,
        "task_pending_action": pending,
    }


@respx.mock
def test_candidates_are_the_tasks_saying_permission_across_every_page():
    pages = {
        "1": [workspace_task("t1", "permission"), workspace_task("t2", "clarification")],
        "2": [workspace_task("t3", None), workspace_task("t4", "permission", None)],
    }

    def tasks(request: httpx.Request) -> httpx.Response:
        page = request.url.params["page"]
        return httpx.Response(200, json={"tasks": pages.get(page, []), "total": 4})

    route = respx.get(f"{BASE}/api/v1/workspaces/w1/tasks").mock(side_effect=tasks)
    c = KandevClient(BASE, retry_max_wait=0.01)

    found = c.permissions.candidates("w1", page_size=2)

    assert [(f.task_id, f.session_id) for f in found] == [("t1", "s"), ("t4", "")]
    assert [r.request.url.params["page_size"] for r in route.calls] == ["2", "2"]


def record_of(msg: dict[str, Any]):
    return PermissionPage.model_validate({"messages": [msg]}).record(REQUEST)


@pytest.mark.parametrize(
    ("step", "recorded", "maybe_mine", "expected"),
    [
        # someone's claim is in flight and not written down yet: a loser, winner unknown
        (ReadTranscript("busy", claimed=True), message(), False, PermissionLost(None)),
        # nothing readable after a lost reply: never guessed
        (ReadTranscript("timeout"), None, True, ResolveUnsettled("timeout")),
        (ReadTranscript("timeout"), message(), True, ResolveUnsettled("timeout", True)),
        (ReadTranscript("failed", unclaimed=True), None, False, ResolveUnsettled("failed")),
        # a claim being delivered names its winner
        (
            ReadTranscript("busy", claimed=True),
            message(None, resolution("reject_once", result="dispatching")),
            False,
            "reject_once",
        ),
        # our option, but chosen in the web UI: not ours
        (
            ReadTranscript("timeout"),
            message("approved", resolution("allow_once", "web")),
            True,
            "allow_once",
        ),
    ],
)
def test_settle_decides_from_the_transcript_and_never_guesses(step, recorded, maybe_mine, expected):
    record = record_of(recorded) if recorded is not None else None
    first_sent = SELECTED_AT - timedelta(seconds=2)

    outcome = settle(choice(), step, record, maybe_mine=maybe_mine, first_sent=first_sent)

    if isinstance(expected, str):
        assert isinstance(outcome, PermissionLost) and outcome.winner is not None
        assert outcome.winner.option_id == expected and not outcome.uncertain
    else:
        assert outcome == expected


def test_a_winner_like_ours_within_the_clocks_tolerance_is_uncertain():
    record = record_of(message("approved", resolution("allow_once", "external_mcp")))
    just_after = SELECTED_AT + timedelta(seconds=0.5)

    outcome = settle(
        choice(), ReadTranscript("timeout"), record, maybe_mine=True, first_sent=just_after
    )

    assert isinstance(outcome, PermissionLost) and outcome.uncertain


@respx.mock
def test_candidates_read_every_page_however_many_there_are():
    # 2,150 tasks, 100 a page: 22 pages (a cap of 20 pages left the last ones unread, so a
    # request there never had a card). The flagged task is on the very last page.
    total = 2150

    def tasks(request: httpx.Request) -> httpx.Response:
        page, size = int(request.url.params["page"]), int(request.url.params["page_size"])
        ids = range((page - 1) * size, min(page * size, total))
        rows = [workspace_task(f"t{i}", "permission" if i == total - 1 else None) for i in ids]
        return httpx.Response(200, json={"tasks": rows, "total": total})

    route = respx.get(f"{BASE}/api/v1/workspaces/w1/tasks").mock(side_effect=tasks)
    c = KandevClient(BASE, retry_max_wait=0.01)

    found = c.permissions.candidates("w1")

    assert [f.task_id for f in found] == [f"t{total - 1}"]
    assert len(route.calls) == 22


@respx.mock
def test_candidates_page_size_is_the_client_s_and_a_page_repeating_itself_is_an_error():
    def same_page(request: httpx.Request) -> httpx.Response:
        rows = [workspace_task("t1", "permission"), workspace_task("t2", None)]
        return httpx.Response(200, json={"tasks": rows, "total": 10})

    route = respx.get(f"{BASE}/api/v1/workspaces/w1/tasks").mock(side_effect=same_page)
    c = KandevClient(BASE, retry_max_wait=0.01, tasks_page_size=2)

    with pytest.raises(KandevProtocolError, match="repeats"):
        c.permissions.candidates("w1")  # never read forever
    assert [r.request.url.params["page_size"] for r in route.calls] == ["2", "2"]


def turn(started: str, completed: str | None = None) -> dict[str, Any]:
    found = {"id": f"turn-{started}", "session_id": SESSION, "started_at": started}
    return found | ({"completed_at": completed} if completed else {})


@respx.mock
def test_turn_ended_reads_the_turn_the_request_was_asked_in():
    # As Kandev v0.95.1 lists a session's turns (oldest first): completed_at once it ended.
    first = turn("2026-12-04T20:00:00.1Z", "2026-12-04T20:10:00.5Z")
    second_open = turn("2026-12-04T20:20:51.885539641Z")
    second_done = turn("2026-12-04T20:20:51.885539641Z", "2026-12-04T20:30:53.175947617Z")
    path = f"{BASE}/api/v1/task-sessions/{SESSION}/turns"
    route = respx.get(path).mock(
        return_value=httpx.Response(200, json={"turns": [first, second_open], "total": 2})
    )
    respx.get(f"{BASE}/api/v1/task-sessions/gone/turns").mock(
        return_value=httpx.Response(404, json={"error": "session not found"})
    )
    c = KandevClient(BASE, retry_max_wait=0.01)
    asked = datetime(2026, 12, 4, 20, 30, 53, tzinfo=UTC)

    assert c.permissions.turn_ended(SESSION, asked) is False
    # an earlier request of the session was asked in the first turn, which ended
    assert c.permissions.turn_ended(SESSION, datetime(2026, 12, 4, 20, 5, tzinfo=UTC)) is True
    route.mock(return_value=httpx.Response(200, json={"turns": [first, second_done]}))
    assert c.permissions.turn_ended(SESSION, asked) is True  # cancelled: Kandev still lists it
    assert c.permissions.turn_ended("gone", asked) is None


def _session(revision: int, pending: bool = False) -> httpx.Response:
    body = {"cancellation_pending": pending, "cancellation_revision": revision}
    return httpx.Response(200, json={"session": {"id": SESSION, **body}})


def _listed(*requests: dict[str, Any]) -> Any:
    return lambda args: {"permissions": list(requests), "task_id": TASK, "total": len(requests)}


@pytest.mark.parametrize(
    ("seen_revision", "revision", "pending", "completed"),
    [
        (None, 2, False, "2026-12-01T19:48:00Z"),  # cancelled before the request was seen
        (0, 0, False, "2026-12-01T19:48:00Z"),  # given up on by the agent: no cancel at all
        (0, 2, False, None),  # cancelled since it was seen
        (0, 1, True, None),  # a cancel under way
    ],
)
@respx.mock
def test_a_click_on_a_request_whose_turn_is_over_sends_nothing(
    seen_revision, revision, pending, completed
):
    respx.get(f"{BASE}/api/v1/task-sessions/{SESSION}").mock(
        return_value=_session(revision, pending)
    )
    turns = [turn("2026-12-01T19:47:00Z", completed)]
    respx.get(f"{BASE}/api/v1/task-sessions/{SESSION}/turns").mock(
        return_value=httpx.Response(200, json={"turns": turns, "total": 1})
    )
    c, fake = make_client(
        {
            "resolve_agent_permission_kandev": lambda a: {"status": "resolved"},
            "list_pending_agent_permissions_kandev": _listed(LISTED),  # Kandev still lists it
        }
    )
    request = PermissionList.model_validate({"permissions": [LISTED]}).permissions[0]
    approval = request.approval(cancellation_revision=seen_revision)

    got = c.permissions.approve(approval, "allow_once", first_sent=datetime.now(UTC))

    assert isinstance(got, models.NotActive) and got.reason == "turn_cancelled"
    assert resolve_calls(fake) == 0


@respx.mock
def test_a_click_after_an_answer_ended_the_turn_learns_who_chose_first():
    # Someone answered first and the agent went on to end its turn: the request left the list,
    # so the click is sent, and Kandev's "already resolved" tells the winner.
    respx.get(f"{BASE}/api/v1/task-sessions/{SESSION}").mock(return_value=_session(0))
    respx.get(f"{BASE}/api/v1/task-sessions/{SESSION}/turns").mock(
        return_value=httpx.Response(
            200, json={"turns": [turn("2026-12-01T19:47:00Z", "2026-12-01T19:48:00Z")]}
        )
    )
    c, fake = make_client(
        {
            "resolve_agent_permission_kandev": lambda a: backend_error(
                "permission_already_resolved"
            ),
            "list_pending_agent_permissions_kandev": _listed(),
            "get_task_conversation_kandev": transcript(
                message("rejected", resolution("reject_once", "web"))
            ),
        }
    )
    request = PermissionList.model_validate({"permissions": [LISTED]}).permissions[0]

    got = c.permissions.approve(
        request.approval(cancellation_revision=0), "allow_once", first_sent=datetime.now(UTC)
    )

    assert isinstance(got, models.Lost) and resolve_calls(fake) == 1


@respx.mock
def test_a_click_on_a_live_turn_is_sent():
    respx.get(f"{BASE}/api/v1/task-sessions/{SESSION}").mock(return_value=_session(0))
    respx.get(f"{BASE}/api/v1/task-sessions/{SESSION}/turns").mock(
        return_value=httpx.Response(200, json={"turns": [turn("2026-12-01T19:47:00Z")]})
    )
    won = {
        "option_id": "allow_once",
        "option_kind": "allow_once",
        "pending_id": PENDING,
        "request_id": REQUEST,
        "session_id": SESSION,
        "source": "external_mcp",
        "status": "resolved",
        "task_id": TASK,
    }
    c, fake = make_client({"resolve_agent_permission_kandev": lambda a: won})
    request = PermissionList.model_validate({"permissions": [LISTED]}).permissions[0]

    got = c.permissions.approve(
        request.approval(cancellation_revision=0), "allow_once", first_sent=datetime.now(UTC)
    )

    assert isinstance(got, models.Won) and resolve_calls(fake) == 1
