"""Every reply to an answer call has a definite, typed outcome (respond.py's total mapping and
the client around it): statuses outside Kandev's table, bodies that are not Kandev's, 429 with
Retry-After, and failures after which the call may or may not have reached Kandev."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
import respx

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.errors import KandevAuthError, KandevUnavailable, KandevUnconfirmed
from kandev_slack.kandev.mcp.wire import ToolResult
from kandev_slack.kandev.models import (
    Invalid,
    Lost,
    NotActive,
    NotFound,
    NotRecorded,
    Unconfirmed,
    Won,
)
from kandev_slack.kandev.respond import outcome_of_reply, outcome_of_tool
from tests.unit.kandev.fake_mcp import FakeMcp
from tests.unit.kandev.test_client import BASE, RESPONSE, clarification, client

RESPOND = f"{BASE}/api/v1/clarification/p1/respond"
MINE = [Answer(question_id="db", selected_options=["q1_opt1"])]
HTML = "<html><body><h1>502 Bad Gateway</h1></body></html>"


def envelope(claimed: bool) -> dict:
    return {"success": True, "claimed": claimed, "status": "answered", "response": RESPONSE}


# ---- the pure mapping: any status, any body --------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (401, '{"error":"authentication required"}'),
        (403, '{"error":"forbidden"}'),
        (403, HTML),
        (405, ""),
        (413, "too large"),
        (418, "teapot"),
        (422, '{"error":"unprocessable"}'),
        (429, '{"error":"slow down"}'),
        (451, "{}"),
        (500, '{"error":"claim failed"}'),
        (502, HTML),
        (503, '{"status":"starting"}'),
        (504, ""),
        (302, ""),
        (400, HTML),  # Kandev's 400/404/409 carry {"error": ...}; these are not Kandev's
        (404, HTML),
        (404, "Not Found"),
        (409, '{"detail":"conflict"}'),
        (400, "[1, 2]"),
    ],
)
def test_statuses_outside_the_table_and_foreign_bodies_are_not_recorded(status, body):
    outcome = outcome_of_reply(status, body)
    assert isinstance(outcome, NotRecorded), outcome
    assert f"HTTP {status}" in outcome.reason
    assert outcome.retry_after is None


def test_a_429_carries_its_retry_after():
    assert outcome_of_reply(429, "", retry_after=30.0) == NotRecorded(
        "HTTP 429: ''", retry_after=30.0
    )
    # Only a 429 asks for a pause.
    assert outcome_of_reply(503, "", retry_after=30.0).retry_after is None


@pytest.mark.parametrize(
    "body",
    [
        HTML,
        "",
        "not json",
        '{"success":true}',
        '{"claimed":"yes","status":"answered"}',
        '{"claimed":true,"status":"pending"}',
        "[]",
        "null",
        '{"claimed": true, "status": "answered", "response": {"answers": "db"}}',
    ],
)
@pytest.mark.parametrize("status", [200, 201, 204])
def test_a_2xx_that_is_not_kandevs_envelope_is_unconfirmed(status, body):
    outcome = outcome_of_reply(status, body)
    assert isinstance(outcome, Unconfirmed), outcome
    assert not outcome.earlier_attempt  # Kandev replied: its record can tell


def test_the_documented_table_is_unchanged():
    assert isinstance(outcome_of_reply(200, json.dumps(envelope(True))), Won)
    assert isinstance(outcome_of_reply(200, json.dumps(envelope(False))), Lost)
    assert outcome_of_reply(400, '{"error":"bad option"}') == Invalid("bad option")
    assert outcome_of_reply(404, '{"error":"not found"}') == NotFound("not found")
    assert outcome_of_reply(409, '{"code":"not_active","error":"gone"}') == NotActive("gone")


def test_tool_results_outside_the_table():
    assert isinstance(
        outcome_of_tool(ToolResult(text="backend error [INTERNAL]: boom", is_error=True)),
        NotRecorded,
    )
    assert isinstance(outcome_of_tool(ToolResult(text="oops", is_error=True)), NotRecorded)
    for text in ("not json", '{"claimed": 1}', "[]"):
        assert isinstance(outcome_of_tool(ToolResult(text=text)), Unconfirmed), text


# ---- through the client: retries, Retry-After and ambiguity ------------------------------------


@respx.mock
def test_a_short_retry_after_is_waited_out_and_the_answer_goes_through():
    route = respx.post(RESPOND).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "0"}, text="slow down"),
            httpx.Response(200, json=envelope(True)),
        ]
    )
    assert isinstance(client().answer("p1", MINE), Won)
    assert route.call_count == 2


@respx.mock
def test_a_long_retry_after_is_not_recorded_at_once_with_the_wait():
    route = respx.post(RESPOND).respond(429, headers={"Retry-After": "120"}, text="later")
    outcome = client().answer("p1", MINE)
    assert isinstance(outcome, NotRecorded) and outcome.retry_after == 120.0
    assert route.call_count == 1


@respx.mock
def test_retry_after_as_an_http_date():
    from datetime import UTC, datetime, timedelta

    when = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    respx.post(RESPOND).respond(429, headers={"Retry-After": when})
    outcome = client().answer("p1", MINE)
    assert isinstance(outcome, NotRecorded)
    assert outcome.retry_after is not None and 60 < outcome.retry_after <= 90


@respx.mock
def test_a_429_that_stays_after_every_attempt_is_not_recorded():
    route = respx.post(RESPOND).respond(429, headers={"Retry-After": "0"})
    outcome = client(retry_attempts=3).answer("p1", MINE)
    assert outcome == NotRecorded("HTTP 429: ''", retry_after=0.0)
    assert route.call_count == 3


@respx.mock
def test_a_403_is_not_recorded_and_not_retried():
    route = respx.post(RESPOND).respond(403, json={"error": "forbidden"})
    assert isinstance(client().answer("p1", MINE), NotRecorded)
    assert route.call_count == 1


@respx.mock
def test_401_is_an_auth_error():
    respx.post(RESPOND).respond(401, json={"error": "authentication required"})
    with pytest.raises(KandevAuthError):
        client().answer("p1", MINE)


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ReadTimeout("slow"),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
        httpx.ReadError("connection reset"),
        httpx.Response(504, text=HTML),
    ],
    ids=["read-timeout", "dropped", "reset", "gateway-timeout"],
)
@respx.mock
def test_failures_after_sending_are_unconfirmed_never_not_recorded(failure):
    respx.post(RESPOND).mock(side_effect=[failure] * 3)
    with pytest.raises(KandevUnconfirmed):
        client(retry_attempts=3).answer("p1", MINE)


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectError("refused"), httpx.ConnectTimeout("no route"), httpx.Response(503)],
    ids=["refused", "connect-timeout", "starting"],
)
@respx.mock
def test_failures_before_sending_are_unavailable_not_unconfirmed(failure):
    respx.post(RESPOND).mock(side_effect=[failure] * 3)
    with pytest.raises(KandevUnavailable) as raised:
        client(retry_attempts=3).answer("p1", MINE)
    assert not isinstance(raised.value, KandevUnconfirmed)


@respx.mock
def test_a_refusal_after_an_attempt_that_may_have_arrived_is_unconfirmed():
    respx.post(RESPOND).mock(
        side_effect=[httpx.ReadTimeout("slow"), httpx.Response(403, json={"error": "no"})]
    )
    outcome = client().answer("p1", MINE)
    assert isinstance(outcome, Unconfirmed) and outcome.earlier_attempt


@respx.mock
def test_a_dropped_connection_then_our_own_answer_as_the_winner_is_won():
    respx.post(RESPOND).mock(
        side_effect=[
            httpx.RemoteProtocolError("Server disconnected without sending a response."),
            httpx.Response(200, json=recorded_after_sending()),
        ]
    )
    assert isinstance(client().answer("p1", MINE), Won)


def recorded_after_sending() -> dict:
    """``claimed:false`` with our own answer, recorded after the bot first sent it."""
    later = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
    return {**envelope(False), "response": {**RESPONSE, "responded_at": later}}


# ---- reading Kandev's record instead of answering ------------------------------------------------


@pytest.mark.parametrize(
    ("status", "response", "expected"),
    [
        ("pending", None, NotRecorded),
        # Like ours, but the conversation does not say when: it may be someone else's.
        ("answered", {"question_id": "db", "selected_options": ["q1_opt1"]}, "uncertain"),
        ("answered", {"question_id": "db", "selected_options": ["q1_opt2"]}, Lost),
        ("cancelled", None, NotActive),
        ("expired", None, NotActive),
    ],
)
@respx.mock
def test_recorded_reads_the_conversation(status, response, expected):
    message = clarification("p1", "db", 0, 1, status, response)
    fake = FakeMcp(
        {"get_task_conversation_kandev": lambda a: {"messages": [message], "has_more": False}}
    )
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    route = respx.post(RESPOND)
    found = client().recorded("t1", "p1", answers=MINE)
    if expected == "uncertain":
        assert isinstance(found, Lost) and found.uncertain, found
    else:
        assert isinstance(found, expected) and not getattr(found, "uncertain", False), found
    assert not route.called  # nothing was sent


@respx.mock
def test_recorded_of_a_bundle_the_conversation_does_not_show_is_unknown():
    fake = FakeMcp({"get_task_conversation_kandev": lambda a: {"messages": [], "has_more": False}})
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    assert client().recorded("t1", "p1", answers=None, reason="no") is None


@pytest.mark.parametrize(
    ("recorded_after_s", "uncertain", "won"),
    [(5.0, False, True), (-5.0, False, False), (-0.5, True, False), (None, True, False)],
)
@respx.mock
def test_recorded_like_ours_is_decided_by_when_kandev_updated_the_messages(
    recorded_after_s, uncertain, won
):
    """A decided message's ``updated_at`` is when Kandev recorded the resolution: after this
    submission was first sent, ours; well before, someone else's; else it cannot be told."""
    first_sent = datetime.now(UTC)
    message = clarification("p1", "db", 0, 1, "rejected")
    if recorded_after_s is not None:
        at = first_sent + timedelta(seconds=recorded_after_s)
        message["updated_at"] = at.isoformat()
    fake = FakeMcp(
        {"get_task_conversation_kandev": lambda a: {"messages": [message], "has_more": False}}
    )
    respx.post(f"{BASE}/mcp").mock(side_effect=fake)
    found = client().recorded("t1", "p1", answers=None, reason="no", first_sent=first_sent)
    assert isinstance(found, Won) == won, found
    assert (isinstance(found, Lost) and found.uncertain) == uncertain, found
