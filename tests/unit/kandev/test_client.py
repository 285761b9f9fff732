"""KandevClient against a scripted Kandev (respx): paging, answering, final state, caching."""

from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest
import respx

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevNotFoundError, KandevProtocolError, KandevUnavailable
from kandev_slack.kandev.models import Lost, NotActive, Won
from tests.unit.kandev.fake_mcp import FakeMcp, ToolError

BASE = "http://kandev.test"


def bundle(n: int) -> dict:
    return {
        "pending_id": f"p{n}",
        "task_id": f"t{n}",
        "session_id": f"s{n}",
        "created_at": "2026-11-30T07:27:52Z",
        "age_seconds": 3,
        "context": "",
        "questions": [
            {
                "question_id": "db",
                "title": "Database",
                "prompt": "Which?",
                "status": "pending",
                "options": [{"option_id": "q1_opt1", "label": "PG", "description": ""}],
            }
        ],
    }


def client(**kw) -> KandevClient:
    c = KandevClient(BASE, kw.pop("token", None), retry_max_wait=0.01, **kw)
    c._http._retry_initial_wait = 0.001  # keep the retry tests fast
    return c


@respx.mock
def test_list_pending_follows_every_cursor():
    pages = {"": ([1, 2], "c1"), "c1": ([3, 4], "c2"), "c2": ([5], "")}

    def list_tool(args):
        numbers, next_cursor = pages[args.get("cursor", "")]
        return {"bundles": [bundle(n) for n in numbers], "count": 2, "next_cursor": next_cursor}

    fake = FakeMcp({"list_pending_questions_kandev": list_tool})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    since = datetime(2026, 11, 30, 9, 0, 5, 700000, tzinfo=timezone(timedelta(hours=1)))
    bundles = client().list_pending(workspace_id="w1", created_since=since, page_size=2)
    assert [b.pending_id for b in bundles] == ["p1", "p2", "p3", "p4", "p5"]
    assert bundles[0].questions[0].options[0].option_id == "q1_opt1"
    first = fake.calls[0][1]
    assert first == {"limit": 2, "workspace_id": "w1", "created_since": "2026-11-30T08:00:05Z"}
    assert [args.get("cursor") for _, args in fake.calls] == [None, "c1", "c2"]


@respx.mock
def test_list_pending_clamps_the_page_size_and_rejects_a_cursor_loop():
    fake = FakeMcp(
        {"list_pending_questions_kandev": lambda a: {"bundles": [], "next_cursor": "same"}}
    )
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    with pytest.raises(KandevProtocolError, match="repeated cursor"):
        client().list_pending(page_size=1000)
    assert fake.calls[0][1]["limit"] == 200


@respx.mock
def test_list_active_decodes_only_the_bundles_not_known_yet():
    pages = {"": ([1, 2], "c1"), "c1": ([3], "")}

    def list_tool(args):
        numbers, next_cursor = pages[args.get("cursor", "")]
        found = [bundle(n) for n in numbers]
        if 3 in numbers:
            found[-1]["created_at"] = "2026-11-30T08:00:00Z"
        if 1 in numbers:
            found[0]["questions"] = "not decoded: already known"
        return {"bundles": found, "count": len(found), "next_cursor": next_cursor}

    fake = FakeMcp({"list_pending_questions_kandev": list_tool})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    new: list = []
    active = client().list_active(new.extend, known={"p1", "p2"}, page_size=2)
    assert active.ids == ["p1", "p2", "p3"]
    assert active.newest == datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    assert [b.pending_id for b in new] == ["p3"]
    assert new[0].questions[0].question_id == "db"

    with pytest.raises(KandevProtocolError):  # the same bundle, not known: decoded and refused
        client().list_active(new.extend, known={"p2"}, page_size=2)


@respx.mock
def test_list_active_hands_each_pages_new_bundles_over_as_it_is_read():
    pages = {"": ([1, 2], "c1"), "c1": ([3, 4], "c2"), "c2": ([5], "")}
    handed: list[tuple[list[str], int]] = []

    def list_tool(args):
        numbers, next_cursor = pages[args.get("cursor", "")]
        return {"bundles": [bundle(n) for n in numbers], "next_cursor": next_cursor}

    fake = FakeMcp({"list_pending_questions_kandev": list_tool})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)

    def on_new(page):  # with how many pages had been asked for when it was handed over
        handed.append(([b.pending_id for b in page], len(fake.calls)))

    active = client().list_active(on_new, known={"p3", "p4"}, page_size=2)

    assert handed == [(["p1", "p2"], 1), (["p5"], 3)]  # a page with nothing new: not handed
    assert active.ids == ["p1", "p2", "p3", "p4", "p5"]


@pytest.mark.parametrize(
    "broken",
    [{"pending_id": ""}, {"pending_id": 7}, {"created_at": "yesterday"}, {"created_at": None}],
)
@respx.mock
def test_list_active_refuses_a_known_bundle_without_an_id_or_a_creation_time(broken):
    def list_tool(args):
        return {"bundles": [{**bundle(1), **broken}], "next_cursor": ""}

    fake = FakeMcp({"list_pending_questions_kandev": list_tool})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    with pytest.raises(KandevProtocolError):
        client().list_active(lambda page: None, known={"p1"})


RESPONSE = {
    "pending_id": "p1",
    "answers": [{"question_id": "db", "selected_options": ["q1_opt1"], "custom_text": ""}],
    "rejected": False,
    "reject_reason": "",
    "responded_at": "2026-11-30T07:18:34.78Z",
}


@respx.mock
def test_answer_over_rest_sends_the_body_and_maps_the_outcome():
    route = respx.post(f"{BASE}/api/v1/clarification/p1/respond").respond(
        200, json={"success": True, "claimed": True, "status": "answered", "response": RESPONSE}
    )
    outcome = client().answer("p1", [Answer(question_id="db", selected_options=["q1_opt1"])])
    assert isinstance(outcome, Won)
    assert route.calls[0].request.read() == (
        b'{"answers":[{"question_id":"db","selected_options":["q1_opt1"],"custom_text":""}],'
        b'"rejected":false,"reject_reason":""}'
    )


def recorded_now() -> dict:
    """Kandev's response, recorded after the bot first sent its submission (made just before)."""
    return {**RESPONSE, "responded_at": (datetime.now(UTC) + timedelta(seconds=1)).isoformat()}


@respx.mock
def test_a_retried_answer_that_finds_itself_the_winner_is_won():
    lost_to_self = {
        "success": True,
        "claimed": False,
        "status": "answered",
        "response": recorded_now(),
    }
    respx.post(f"{BASE}/api/v1/clarification/p1/respond").mock(
        side_effect=[httpx.ReadTimeout("slow"), httpx.Response(200, json=lost_to_self)]
    )
    outcome = client().answer("p1", [Answer(question_id="db", selected_options=["q1_opt1"])])
    assert isinstance(outcome, Won)


@pytest.mark.parametrize("transport", ["rest", "mcp"])
@respx.mock
def test_a_resend_that_finds_its_own_content_the_winner_is_won(transport):
    winner = {"success": True, "claimed": False, "status": "answered", "response": recorded_now()}
    rejected = {
        "success": True,
        "claimed": False,
        "status": "rejected",
        "response": {"responded_at": recorded_now()["responded_at"]},
    }
    replies = iter([winner, winner, rejected, winner])
    respx.post(f"{BASE}/api/v1/clarification/p1/respond").mock(
        side_effect=lambda request: httpx.Response(200, json=next(replies))
    )
    respx.post(f"{BASE}/mcp").mock(
        side_effect=FakeMcp({"answer_question_kandev": lambda a: next(replies)})
    )
    c = client()
    same = [Answer(question_id="db", selected_options=["q1_opt1"])]
    other = [Answer(question_id="db", custom_text="SQLite")]
    # A first attempt (no ambiguity on the wire): someone else's identical answer won.
    assert isinstance(c.answer("p1", same, transport=transport), Lost)
    # Crash recovery re-sending what a dead process may have sent: that attempt won.
    assert isinstance(c.answer("p1", same, transport=transport, resend=True), Won)
    won = c.reject("p1", "not now", transport=transport, resend=True)
    assert isinstance(won, Won) and won.resolution.reject_reason == "not now"
    assert isinstance(c.answer("p1", other, transport=transport, resend=True), Lost)


@pytest.mark.parametrize("transport", ["rest", "mcp"])
@respx.mock
def test_a_maybe_delivered_rejection_is_not_credited_with_a_rejection_recorded_before_it(
    transport,
):
    """Someone rejected in Kandev before this rejection was first sent; its first attempt got a
    502 (maybe delivered), the retry is told ``claimed:false`` with a rejection: not ours."""
    first_sent = datetime.now(UTC)
    earlier = (first_sent - timedelta(seconds=3)).isoformat()
    lost = {
        "success": True,
        "claimed": False,
        "status": "rejected",
        "response": {"rejected": True, "reject_reason": "", "responded_at": earlier},
    }
    respx.post(f"{BASE}/api/v1/clarification/p1/respond").mock(
        side_effect=[httpx.Response(502, text="bad gateway"), httpx.Response(200, json=lost)]
    )
    respx.post(f"{BASE}/mcp").mock(side_effect=FakeMcp({"answer_question_kandev": lambda a: lost}))
    c = client()
    resend = transport == "mcp"  # the MCP path: crash recovery's re-send
    outcome = c.reject("p1", "not now", transport=transport, resend=resend)
    assert isinstance(outcome, Lost) and not outcome.uncertain, outcome
    assert outcome.resolution.reject_reason == ""


@pytest.mark.parametrize(
    ("recorded_after_s", "expected"),
    [(-3.0, "lost"), (-0.5, "uncertain"), (None, "uncertain"), (0.5, "won")],
)
@respx.mock
def test_a_retried_answer_like_the_winner_is_decided_by_when_kandev_recorded_it(
    recorded_after_s, expected
):
    """Recorded before the first send: someone else's; just before (within the clocks'
    tolerance) or with no time: cannot tell; after: ours."""
    first_sent = datetime.now(UTC)
    response = dict(RESPONSE)
    response["responded_at"] = (
        None
        if recorded_after_s is None
        else (first_sent + timedelta(seconds=recorded_after_s)).isoformat()
    )
    lost = {"success": True, "claimed": False, "status": "answered", "response": response}
    respx.post(f"{BASE}/api/v1/clarification/p1/respond").mock(
        side_effect=[httpx.ReadTimeout("slow"), httpx.Response(200, json=lost)]
    )
    same = [Answer(question_id="db", selected_options=["q1_opt1"])]
    outcome = client().answer("p1", same, first_sent=first_sent)
    found = (
        "won"
        if isinstance(outcome, Won)
        else "uncertain"
        if isinstance(outcome, Lost) and outcome.uncertain
        else "lost"
    )
    assert found == expected, outcome


@respx.mock
def test_answer_gives_up_with_unavailable_on_persistent_5xx():
    respx.post(f"{BASE}/api/v1/clarification/p1/respond").respond(500, json={"error": "x"})
    with pytest.raises(KandevUnavailable):
        client(retry_attempts=2).reject("p1")


@respx.mock
def test_reject_over_mcp_maps_conflict_and_lost():
    answers = iter(
        [
            ToolError("backend error [CONFLICT]: clarification request is no longer active"),
            {"claimed": False, "status": "answered", "response": RESPONSE},
        ]
    )
    fake = FakeMcp({"answer_question_kandev": lambda args: next(answers)})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    c = client()
    assert c.reject("p1", "no", transport="mcp") == NotActive(
        "clarification request is no longer active"
    )
    assert isinstance(c.reject("p1", transport="mcp"), Lost)
    assert fake.calls[0][1] == {"pending_id": "p1", "rejected": True, "reject_reason": "no"}
    with pytest.raises(ValueError):
        c.reject("p1", transport="carrier-pigeon")


def clarification(pending_id, question_id, index, total, status, response=None):
    metadata = {
        "pending_id": pending_id,
        "question_id": question_id,
        "question_index": index,
        "question_total": total,
        "status": status,
    }
    if response:
        metadata["response"] = response
    return {"id": f"{pending_id}-{index}", "type": "clarification_request", "metadata": metadata}


@respx.mock
def test_final_state_pages_backwards_until_the_bundle_is_complete():
    pages = {
        None: {"messages": [clarification("new", "x", 0, 1, "pending")], "cursor": "m3"},
        "m3": {
            "messages": [
                clarification("old", "lang", 1, 2, "answered", {"selected_options": ["q2_opt1"]})
            ],
            "cursor": "m2",
        },
        "m2": {
            "messages": [
                clarification(
                    "old",
                    "db",
                    0,
                    2,
                    "answered",
                    {"question_id": "db", "selected_options": ["q1_opt2"], "custom_text": "hm"},
                )
            ],
            "cursor": "m1",
        },
    }

    def conversation(args):
        return {**pages[args.get("before")], "has_more": True}

    fake = FakeMcp({"get_task_conversation_kandev": conversation})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    state = client(conversation_page_size=1).final_state("t1", "old", session_id="s1")
    assert state.status == "answered"
    assert state.answers == [
        Answer(question_id="db", selected_options=["q1_opt2"], custom_text="hm"),
        Answer(question_id="lang", selected_options=["q2_opt1"]),
    ]
    assert len(fake.calls) == 3  # stopped once both questions were seen
    first = fake.calls[0][1]
    assert first["sort"] == "desc" and first["limit"] == 1 and first["session_id"] == "s1"
    assert first["message_types"] == ["clarification_request"]


@respx.mock
def test_a_hinted_bundle_is_read_from_its_session_s_conversation_until_it_is_whole():
    def asked(question_id, index):
        message = clarification("p1", question_id, index, 2, "pending")
        message["metadata"]["question"] = {"id": question_id, "title": question_id, "options": []}
        return {**message, "session_id": "s1", "created_at": "2026-12-05T21:50:43.79Z"}

    written = [asked("lang", 1)]  # newest first: "db" is not written yet

    def conversation(args):
        if args.get("before") == "m1":
            return {"messages": written[1:], "has_more": False}
        return {"messages": written[:1], "has_more": len(written) > 1, "cursor": "m1"}

    fake = FakeMcp({"get_task_conversation_kandev": conversation})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    c = client(conversation_page_size=1)
    assert c.conversation_bundle("t1", "p1", session_id="s1") is None  # not whole yet
    written.append(asked("db", 0))
    bundle = c.conversation_bundle("t1", "p1", session_id="s1")
    assert bundle is not None and [q.question_id for q in bundle.questions] == ["db", "lang"]
    assert (bundle.task_id, bundle.session_id) == ("t1", "s1")
    assert bundle.created_at == datetime(2026, 12, 5, 21, 50, 43, tzinfo=UTC)
    assert len(fake.calls) == 3  # one page, then two until both questions were seen
    first = fake.calls[0][1]
    assert first["session_id"] == "s1" and first["message_types"] == ["clarification_request"]
    assert first["sort"] == "desc"


@respx.mock
def test_a_hinted_bundle_of_an_unknown_task_is_none():
    fake = FakeMcp(
        {"get_task_conversation_kandev": lambda a: ToolError("backend error [NOT_FOUND]: task")}
    )
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    assert client().conversation_bundle("nope", "p") is None


@respx.mock
def test_final_state_of_an_unknown_task_is_unknown():
    fake = FakeMcp(
        {"get_task_conversation_kandev": lambda a: ToolError("backend error [NOT_FOUND]: task")}
    )
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    assert client().final_state("nope", "p").status == "unknown"


@respx.mock
def test_task_and_workspaces_are_cached_briefly():
    task_route = respx.get(f"{BASE}/api/v1/tasks/t1").respond(
        200, json={"id": "t1", "title": "Fix login", "workspace_id": "w1", "state": "x"}
    )
    ws_route = respx.get(f"{BASE}/api/v1/workspaces").respond(
        200, json={"workspaces": [{"id": "w1", "name": "Main"}], "total": 1}
    )
    respx.get(f"{BASE}/api/v1/tasks/gone").respond(404, json={"error": "task not found"})
    c = client()
    assert c.task("t1").title == "Fix login"
    assert c.task("t1").workspace_id == "w1"
    assert [w.id for w in c.workspaces()] == ["w1"]
    assert task_route.call_count == 1 and ws_route.call_count == 1
    with pytest.raises(KandevNotFoundError):
        c.task("gone")
    expired = client(cache_ttl=0)
    expired.task("t1")
    expired.task("t1")
    assert task_route.call_count == 3


@respx.mock
def test_probe_reports_each_expected_failure_without_raising():
    health = respx.get(f"{BASE}/health")
    api = respx.get(f"{BASE}/api/v1/workspaces")
    health.respond(200, json={"status": "ok", "version": "v0.95.1"})

    api.respond(503, json={"status": "starting"})
    starting = client().probe()
    assert (starting.reachable, starting.ready, starting.auth_ok) == (True, False, None)
    assert starting.version == "v0.95.1" and "starting" in starting.detail and not starting.ok

    api.respond(401, json={"error": "authentication required"})
    denied = client(token="kandev_pat_bad").probe()
    assert (denied.ready, denied.auth_ok, denied.token_sent) == (True, False, True)
    assert "KANDEV_TOKEN" in denied.detail

    api.respond(200, json={"workspaces": []})
    respx.post(f"{BASE}/mcp").mock(side_effect=FakeMcp())
    fine = client().probe()
    assert fine.ok and fine.mcp_ok and fine.detail == ""

    health.respond(200, text="ok")
    assert client().probe().version is None


def test_probe_of_nothing_listening_is_unreachable(unused_port):
    nothing = KandevClient(f"http://127.0.0.1:{unused_port}").probe()
    assert not nothing.reachable and not nothing.ok and nothing.version is None


@respx.mock
def test_user_names_are_the_admins_list_else_the_members_directory():
    admin = respx.get(f"{BASE}/api/v1/users")
    admin.respond(
        200,
        json={
            "users": [
                {"id": "default-user", "email": "a@x.test", "display_name": "Admin"},
                {"id": "u-ben", "email": "ben@x.test", "display_name": "Ben", "role": "member"},
                {"id": "u-nameless", "email": "n@x.test", "display_name": None},
            ]
        },
    )
    assert client().user_names() == {"default-user": "Admin", "u-ben": "Ben", "u-nameless": ""}

    admin.respond(403, json={"error": "insufficient permissions", "scope": "org.members.manage"})
    directory = respx.get(f"{BASE}/api/v1/users/directory").respond(
        200, json={"total": 2, "users": [{"id": "u-ana", "display_name": "Ana"}, {"id": "u-b"}]}
    )
    assert client().user_names() == {"u-ana": "Ana", "u-b": ""}
    assert directory.call_count == 1


@respx.mock
def test_user_names_that_cannot_be_read_are_an_error_and_names_says_which_kind():
    respx.get(f"{BASE}/api/v1/users").respond(403, json={"error": "insufficient permissions"})
    directory = respx.get(f"{BASE}/api/v1/users/directory")
    directory.respond(200, json={"users": [{"display_name": "no id"}]})
    with pytest.raises(KandevProtocolError):
        client().user_names()
    assert client().names() == "unreachable"
    directory.respond(404, text="404 page not found")
    assert client().names() == "unreachable"
    directory.respond(401, json={"error": "authentication required"})
    assert client().names() == "refused"
    respx.get(f"{BASE}/api/v1/users").respond(503, text="down")
    assert client().names() == "unreachable"


@respx.mock
def test_a_tasks_assignee_is_read_absent_null_or_set_and_none_when_unreadable():
    task = respx.get(f"{BASE}/api/v1/tasks/t1")
    task.respond(200, json={"id": "t1", "workspace_id": "w1"})  # unset: Kandev leaves it out
    assert client().assignee("t1") == ""
    task.respond(200, json={"id": "t1", "workspace_id": "w1", "assignee_user_id": None})
    assert client().assignee("t1") == ""
    task.respond(200, json={"id": "t1", "workspace_id": "w1", "assignee_user_id": "u-ana"})
    assert client().assignee("t1") == "u-ana"
    assert client().task("t1").assignee_user_id == "u-ana"
    respx.get(f"{BASE}/api/v1/tasks/gone").respond(404, json={"error": "task not found"})
    assert client().assignee("gone") is None
