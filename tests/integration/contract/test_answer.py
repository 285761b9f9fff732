"""Contract: answering and rejecting over REST and MCP give the documented typed outcomes."""

import threading

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.models import Invalid, Lost, NotActive, NotFound, Won
from tests.kit.harness import sample_questions
from tests.kit.polling import eventually

pytestmark = pytest.mark.kandev

TRANSPORTS = ["rest", "mcp"]
UNKNOWN_ID = "00000000-0000-0000-0000-000000000000"


def pick(*choices: str) -> list[Answer]:
    """One answer per question, question n gets option ``choices[n-1]``."""
    return [
        Answer(question_id=f"q{n}", selected_options=[choice])
        for n, choice in enumerate(choices, start=1)
    ]


def listed(client, pending_id: str) -> bool:
    return any(b.pending_id == pending_id for b in client.list_pending())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_first_answer_wins_and_a_later_one_loses_to_the_winners_answers(
    kandev, client, seed, transport
):
    bundle = seed(sample_questions(2))
    answers = [
        Answer(question_id="q1", selected_options=["q1_opt2"], custom_text="  because docs "),
        Answer(question_id="q2", selected_options=["q2_opt1"]),
    ]
    won = client.answer(bundle.pending_id, answers, transport=transport)
    assert isinstance(won, Won)
    assert won.resolution.status == "answered"
    assert won.resolution.responded_at is not None
    by_question = {a.question_id: a for a in won.resolution.answers}
    assert by_question["q1"].selected_options == ["q1_opt2"]
    assert by_question["q1"].custom_text == "because docs"  # Kandev trims

    other = "mcp" if transport == "rest" else "rest"
    lost = client.answer(bundle.pending_id, pick("q1_opt1", "q2_opt2"), transport=other)
    assert isinstance(lost, Lost)
    assert lost.resolution.status == "answered"
    assert lost.resolution.answers == won.resolution.answers
    assert lost.resolution.responded_at == won.resolution.responded_at
    rejected_late = client.reject(bundle.pending_id, "too late", transport=transport)
    assert isinstance(rejected_late, Lost) and rejected_late.resolution.status == "answered"

    told = kandev.agent_result(bundle.task_id, timeout=15)
    assert told is not None and "q1_opt2" in str(told)
    assert not listed(client, bundle.pending_id)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reject_wins_and_later_answers_see_the_rejection(kandev, client, seed, transport):
    bundle = seed(sample_questions(1))
    won = client.reject(bundle.pending_id, "not now", transport=transport)
    assert isinstance(won, Won)
    assert won.resolution.status == "rejected"
    assert won.resolution.reject_reason == "not now"
    lost = client.answer(bundle.pending_id, pick("q1_opt1"), transport=transport)
    assert isinstance(lost, Lost)
    assert lost.resolution.status == "rejected"
    assert lost.resolution.answers == []
    assert lost.resolution.reject_reason == ""  # Kandev does not store the reason


def test_not_active_after_an_operator_cancel(kandev, client, seed):
    bundle = seed(sample_questions(1))
    kandev.cancel(bundle.pending_id)
    for transport in TRANSPORTS:
        outcome = client.answer(bundle.pending_id, pick("q1_opt1"), transport=transport)
        assert isinstance(outcome, NotActive), transport
        assert "no longer active" in outcome.message
        assert isinstance(client.reject(bundle.pending_id, transport=transport), NotActive)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_invalid_submissions_are_refused_before_any_claim(kandev, client, seed, transport):
    bundle = seed(sample_questions(2))
    bad_option = client.answer(bundle.pending_id, pick("nope", "q2_opt1"), transport=transport)
    assert isinstance(bad_option, Invalid)
    assert "unknown option_id" in bad_option.message and "nope" in bad_option.message
    too_few = client.answer(bundle.pending_id, pick("q1_opt1"), transport=transport)
    assert isinstance(too_few, Invalid)
    assert "expected exactly 2 answer(s), got 1" in too_few.message
    too_long = client.reject(bundle.pending_id, "x" * 2001, transport=transport)
    assert isinstance(too_long, Invalid)
    assert listed(client, bundle.pending_id)  # still answerable
    assert isinstance(client.answer(bundle.pending_id, pick("q1_opt1", "q2_opt2")), Won)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_unknown_bundle_is_not_found(kandev, client, transport):
    outcome = client.answer(UNKNOWN_ID, pick("q1_opt1"), transport=transport)
    assert isinstance(outcome, NotFound)
    assert "not found" in outcome.message
    assert isinstance(client.reject("not-a-uuid", transport=transport), NotFound)


def test_rest_and_mcp_racing_on_one_bundle_make_exactly_one_winner(kandev, client, seed):
    for _ in range(3):
        bundle = seed(sample_questions(1))
        start = threading.Barrier(2)
        outcomes: dict[str, object] = {}

        def race(transport: str, choice: str, bundle=bundle, start=start, outcomes=outcomes):
            start.wait()
            outcomes[transport] = client.answer(
                bundle.pending_id, pick(choice), transport=transport
            )

        threads = [
            threading.Thread(target=race, args=("rest", "q1_opt1")),
            threading.Thread(target=race, args=("mcp", "q1_opt2")),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        winners = [o for o in outcomes.values() if isinstance(o, Won)]
        losers = [o for o in outcomes.values() if isinstance(o, Lost)]
        assert len(winners) == 1 and len(losers) == 1, outcomes
        assert losers[0].resolution.answers == winners[0].resolution.answers
        final = eventually(
            lambda b=bundle: (
                (s := client.final_state(b.task_id, b.pending_id)).status == "answered" and s
            )
        )
        assert final.answers == winners[0].resolution.answers
