"""Contract: how a bundle ended, read back from the task conversation."""

import pytest

from bot.core.clarification import Answer
from bot.kandev.models import Won
from tests.kit.harness import sample_questions
from tests.kit.polling import eventually

pytestmark = pytest.mark.kandev


def final(client, bundle, status: str):
    return eventually(
        lambda: (s := client.final_state(bundle.task_id, bundle.pending_id)).status == status and s
    )


def test_pending_then_answered_with_the_answers(kandev, client, seed):
    bundle = seed(sample_questions(3))
    assert client.final_state(bundle.task_id, bundle.pending_id).status == "pending"
    answers = [
        Answer(question_id="q1", selected_options=["q1_opt2"]),
        Answer(question_id="q2", custom_text="my own words"),
        Answer(question_id="q3", selected_options=["q3_opt1"], custom_text="and why"),
    ]
    assert isinstance(client.answer(bundle.pending_id, list(reversed(answers))), Won)
    state = final(client, bundle, "answered")
    assert state.answers == answers  # in question order
    same = client.final_state(bundle.task_id, bundle.pending_id, session_id=bundle.session_id)
    assert same == state


def test_rejected(kandev, client, seed):
    bundle = seed(sample_questions(2))
    assert isinstance(client.reject(bundle.pending_id, "no", transport="mcp"), Won)
    state = final(client, bundle, "rejected")
    assert state.answers == []


def test_cancelled(kandev, client, seed):
    bundle = seed(sample_questions(1))
    kandev.cancel(bundle.pending_id)
    assert final(client, bundle, "cancelled").answers == []


def test_unknown_bundle_or_task(kandev, client, seed):
    bundle = seed(sample_questions(1))
    assert client.final_state(bundle.task_id, "00000000-0000-0000-0000-000000000000").status == (
        "unknown"
    )
    assert client.final_state("00000000-0000-0000-0000-000000000000", bundle.pending_id).status == (
        "unknown"
    )
