"""The wording helpers the answer flow and the listings reuse."""

from __future__ import annotations

import re

from kandev_slack.cards import answers_summary, outcome_line
from kandev_slack.cards.limits import slack_len
from kandev_slack.cards.wording import MAX_OUTCOME_LINE, MAX_SUMMARY
from kandev_slack.cards.words import (
    already_answered_message,
    ended_message,
    invalid_message,
    lost_message,
    not_recorded_message,
    unavailable_message,
)
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import CardState
from tests.kit.factories import make_bundle, make_outcome


def _answered(answers, by_user=None, via="kandev"):
    return make_outcome(CardState.ANSWERED, via=via, by_user=by_user, answers=answers)


def test_answers_summary(three_questions):
    answers = [
        Answer(question_id="cache", selected_options=["q2_opt1"]),
        Answer(question_id="db", custom_text="text <b>"),
        Answer(question_id="queue", selected_options=["q3_opt1", "unknown&id"], custom_text="x"),
    ]
    assert answers_summary(three_questions, answers) == (
        "“text &lt;b&gt;”; Redis; RabbitMQ, unknown&amp;id + “x”"
    )
    assert answers_summary(three_questions, answers[:1]) == "no answer; Redis; no answer"
    assert answers_summary(three_questions, []) == ""


def test_lost_message(one_question):
    winner = _answered([Answer(question_id="db", selected_options=["q1_opt2"])])
    assert lost_message(one_question, winner) == (
        "Answered in Kandev first: MongoDB. Your answer was not sent."
    )
    slack_winner = _answered(winner.answers, by_user="U777", via="slack")
    assert lost_message(one_question, slack_winner, action="reject") == (
        "<@U777> answered first in Slack: MongoDB. Your rejection was not sent."
    )
    rejected = make_outcome(CardState.REJECTED)
    assert lost_message(one_question, rejected) == (
        "Rejected in Kandev first. Your answer was not sent."
    )
    unnamed = make_outcome(CardState.REJECTED, via="slack")
    assert lost_message(one_question, unnamed) == (
        "Rejected in Slack first. Your answer was not sent."
    )


def test_already_answered_message(one_question):
    mine = _answered([Answer(question_id="db", selected_options=["q1_opt1"])], "U1", "slack")
    assert already_answered_message(one_question, mine) == (
        "You already answered this: PostgreSQL. Nothing more was sent."
    )
    rejected = make_outcome(CardState.REJECTED)
    assert already_answered_message(one_question, rejected) == (
        "You already rejected this question; nothing more was sent."
    )


def test_fixed_messages():
    assert ended_message().startswith("The agent no longer needs this answer")
    assert "cannot see it" in unavailable_message()
    assert not_recorded_message() == (
        "Your answer was *not* recorded: Kandev cannot be reached right now. "
        "The question is still open — please try again in a moment."
    )
    assert "Your rejection was *not* recorded" in not_recorded_message(action="reject")
    assert invalid_message('answer 1 references unknown option_id "<!here>"') == (
        'Kandev did not accept your answer: answer 1 references unknown option_id "&lt;!here&gt;"'
    )


def test_outcome_line_escapes_and_bounds_the_reason(one_question):
    outcome = make_outcome(
        CardState.REJECTED, via="slack", by_user="U1AB", reason="<!channel> " * 500
    )
    line = outcome_line(outcome, one_question)
    assert line.startswith("⛔ Rejected by <@U1AB> in Slack: “&lt;!channel&gt; ")
    assert line.endswith("…”") and len(line) < 400
    pending = make_outcome(CardState.PENDING)
    assert outcome_line(pending, one_question) == "⏳ Waiting for an answer"


def _six_options(q: int) -> dict:
    return {
        "question_id": f"q{q}",
        "title": f"Question {q}",
        "prompt": "Pick any",
        "options": [
            {"option_id": f"q{q}_opt{o}", "label": f"Q{q} option {o} " + "long label " * 12}
            for o in range(1, 7)
        ],
    }


def test_several_options_per_question_are_condensed_not_listed_in_full():
    bundle = make_bundle(*[_six_options(q) for q in range(1, 5)])
    answers = [
        Answer(
            question_id=f"q{q}",
            selected_options=[f"q{q}_opt{o}" for o in range(1, 7)] + [f"q{q}_opt1"],
            custom_text="x" * 2000,
        )
        for q in range(1, 5)
    ]
    summary = answers_summary(bundle, answers)
    assert slack_len(summary) <= MAX_SUMMARY
    items = summary.split("; ")
    assert len(items) == 4
    for q, item in enumerate(items, start=1):
        assert item.startswith(f"Q{q} option 1 long label")
        assert re.search(r" …and [1-5] more \+ “x+…”$", item), item
        shown = item.count(f"Q{q} option")
        assert f"…and {6 - shown} more" in item  # each option once, the rest counted
    line = outcome_line(_answered(answers, by_user="U1AB", via="slack"), bundle)
    assert line.startswith("✅ Answered by <@U1AB> in Slack: Q1 option 1 long label")
    assert slack_len(line) <= MAX_OUTCOME_LINE


def test_a_free_text_answer_is_quoted_by_its_start():
    bundle = make_bundle(_six_options(1))
    answer = Answer(
        question_id="q1", custom_text="Use the other index, the one on (customer_id, created_at)"
    )
    assert answers_summary(bundle, [answer]) == "“Use the other index, the one on…”"
    line = outcome_line(_answered([answer], by_user="U1AB", via="slack"), bundle, mention=False)
    assert line == "✅ Answered in Slack: “Use the other index, the one on…”"


def test_one_question_with_every_option_chosen_lists_what_fits():
    bundle = make_bundle(_six_options(1))
    answer = Answer(question_id="q1", selected_options=[f"q1_opt{o}" for o in range(1, 7)])
    summary = answers_summary(bundle, [answer])
    assert summary.count("Q1 option") == 6 and "more" not in summary
    tight = answers_summary(bundle, [answer], budget=250)
    assert slack_len(tight) <= 250 and tight.endswith(" more")
