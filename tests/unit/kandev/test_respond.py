"""Mapping of REST respond / MCP answer replies to the typed Outcome."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.errors import KandevProtocolError, KandevToolError
from kandev_slack.kandev.mcp.wire import ToolResult
from kandev_slack.kandev.models import Invalid, Lost, NotActive, NotFound, Resolution, Won
from kandev_slack.kandev.respond import Submission, outcome_from_rest, outcome_from_tool, settle

WINNER = {
    "pending_id": "p1",
    "answers": [{"question_id": "db", "selected_options": ["q1_opt2"], "custom_text": "docs"}],
    "rejected": False,
    "reject_reason": "",
    "responded_at": "2026-11-30T07:18:34.78Z",
}


def rest_200(claimed: bool, status: str = "answered", response=WINNER) -> str:
    return json.dumps({"success": True, "claimed": claimed, "status": status, "response": response})


def test_rest_200_claimed_is_won_with_the_recorded_resolution():
    outcome = outcome_from_rest(200, rest_200(True))
    assert isinstance(outcome, Won)
    assert outcome.resolution.status == "answered"
    assert outcome.resolution.answers == [
        Answer(question_id="db", selected_options=["q1_opt2"], custom_text="docs")
    ]
    assert outcome.resolution.responded_at is not None


def test_rest_200_not_claimed_is_lost_with_the_winners_resolution():
    rejected = {**WINNER, "answers": [], "rejected": True}
    outcome = outcome_from_rest(200, rest_200(False, "rejected", rejected))
    assert isinstance(outcome, Lost)
    assert outcome.resolution.status == "rejected"
    assert outcome.resolution.answers == []


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, '{"error":"expected exactly 2 answer(s), got 1"}', Invalid),
        (404, '{"error":"clarification request not found"}', NotFound),
        (
            409,
            '{"code":"not_active","error":"clarification request is no longer active"}',
            NotActive,
        ),
    ],
)
def test_rest_error_statuses(status, body, expected):
    outcome = outcome_from_rest(status, body)
    assert isinstance(outcome, expected)
    assert outcome.message == json.loads(body)["error"]


def test_rest_unexpected_answers_are_protocol_errors():
    with pytest.raises(KandevProtocolError):
        outcome_from_rest(418, "teapot")
    with pytest.raises(KandevProtocolError):
        outcome_from_rest(200, '{"success":true}')
    with pytest.raises(KandevProtocolError):
        outcome_from_rest(200, "<html>")
    assert outcome_from_rest(400, "invalid payload: EOF") == Invalid("invalid payload: EOF")


def tool(text: str, is_error: bool = False) -> ToolResult:
    return ToolResult(text=text, is_error=is_error)


def test_mcp_results_map_like_rest():
    payload = {"claimed": True, "status": "answered", "response": WINNER}
    assert isinstance(outcome_from_tool(tool(json.dumps(payload))), Won)
    assert isinstance(outcome_from_tool(tool(json.dumps({**payload, "claimed": False}))), Lost)
    cases = {
        "backend error [VALIDATION_ERROR]: bad option": Invalid("bad option"),
        "invalid arguments for answer_question_kandev: validation failed at /answers": Invalid(
            "invalid arguments for answer_question_kandev: validation failed at /answers"
        ),
        "backend error [NOT_FOUND]: clarification request not found": NotFound(
            "clarification request not found"
        ),
        "backend error [CONFLICT]: no longer active": NotActive("no longer active"),
    }
    for text, expected in cases.items():
        assert outcome_from_tool(tool(text, is_error=True)) == expected
    with pytest.raises(KandevToolError):
        outcome_from_tool(tool("backend error [INTERNAL]: boom", is_error=True))


def test_submission_bodies():
    answers = [Answer(question_id="db", selected_options=["q1_opt1"])]
    assert Submission.answer(answers).rest_body() == {
        "answers": [{"question_id": "db", "selected_options": ["q1_opt1"], "custom_text": ""}],
        "rejected": False,
        "reject_reason": "",
    }
    assert Submission.reject("not now").rest_body() == {
        "answers": [],
        "rejected": True,
        "reject_reason": "not now",
    }
    assert Submission.reject("x").tool_arguments("p") == {
        "pending_id": "p",
        "rejected": True,
        "reject_reason": "x",
    }
    assert Submission.answer(answers).tool_arguments("p")["answers"][0]["question_id"] == "db"


SENT = datetime(2026, 11, 30, 7, 18, 34, tzinfo=UTC)  # when the submission was first sent


def lost(status: str, answers: list[Answer], *, after_s: float | None = 0.1) -> Lost:
    """The winner Kandev reports, recorded ``after_s`` seconds after SENT (None: no time)."""
    at = None if after_s is None else SENT + timedelta(seconds=after_s)
    return Lost(Resolution(status=status, answers=answers, responded_at=at))


def test_settle_turns_our_own_earlier_attempt_into_won_only_after_an_ambiguous_retry():
    mine = Submission.answer([Answer(question_id="db", custom_text="  because ")])
    same = lost("answered", [Answer(question_id="db", custom_text="because")])
    other = lost("answered", [Answer(question_id="db", selected_options=["q1_opt1"])])
    assert isinstance(settle(same, mine, maybe_duplicate=True, first_sent=SENT), Won)
    assert settle(same, mine, maybe_duplicate=False, first_sent=SENT) == same
    assert settle(other, mine, maybe_duplicate=True, first_sent=SENT) == other
    rejected = settle(
        lost("rejected", []), Submission.reject("nope"), maybe_duplicate=True, first_sent=SENT
    )
    assert isinstance(rejected, Won)
    assert rejected.resolution.reject_reason == "nope"
    assert settle(NotFound("x"), mine, maybe_duplicate=True) == NotFound("x")


@pytest.mark.parametrize(
    ("after_s", "first_sent", "expected"),
    [
        (-5.0, SENT, "lost"),  # recorded before this submission left the bot: someone else's
        (-0.5, SENT, "uncertain"),  # within the clocks' tolerance: cannot tell
        (None, SENT, "uncertain"),  # no responded_at (a conversation read)
        (0.1, None, "uncertain"),  # no send time
        (0.1, SENT, "won"),
    ],
)
def test_a_rejection_like_ours_after_a_maybe_delivered_attempt_is_decided_by_its_time(
    after_s, first_sent, expected
):
    """A rejection's reason is not stored, so any rejection looks like ours: only Kandev's
    ``responded_at`` against the first send can tell whose it was."""
    settled = settle(
        lost("rejected", [], after_s=after_s),
        Submission.reject("not now"),
        maybe_duplicate=True,
        first_sent=first_sent,
    )
    found = (
        "won"
        if isinstance(settled, Won)
        else ("uncertain" if isinstance(settled, Lost) and settled.uncertain else "lost")
    )
    assert found == expected, settled
    if isinstance(settled, Lost):
        assert settled.resolution.reject_reason == ""  # never "sent with your reason"
