"""How Kandev's view of a bundle becomes a card state (pure parts of sync and answers)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import CardState
from kandev_slack.kandev.models import FinalState
from kandev_slack.usecases.answering.verdicts import Attempt
from kandev_slack.usecases.intake.reconciler import outcome_from_final

AT = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ("answered", CardState.ANSWERED),
        ("rejected", CardState.REJECTED),
        ("cancelled", CardState.ENDED),
        ("expired", CardState.ENDED),
        ("unknown", CardState.UNAVAILABLE),
    ],
)
def test_final_status_maps_to_a_terminal_card_state(status, state):
    outcome = outcome_from_final(FinalState(status=status), AT)
    assert outcome is not None
    assert outcome.state is state
    assert outcome.via == "kandev"
    assert outcome.by_user is None
    assert outcome.at == AT


def test_answers_of_a_kandev_resolution_are_kept_for_the_card():
    answers = [Answer(question_id="db", selected_options=["q1_opt2"])]
    outcome = outcome_from_final(FinalState(status="answered", answers=answers), AT)
    assert outcome is not None and outcome.answers == answers


def test_a_bundle_still_pending_in_its_messages_is_not_decided_yet():
    assert outcome_from_final(FinalState(status="pending"), AT) is None


def _attempt(**kw) -> Attempt:
    base = dict(pending_id="p1", user_id="U1", action="answer", source="button")
    base.update(kw)
    return Attempt(**base)


def test_the_same_submission_has_the_same_key_whatever_its_order_or_padding():
    a = _attempt(
        answers=(
            Answer(question_id="q1", selected_options=["q1_opt1"]),
            Answer(question_id="q2", custom_text="  because  "),
        )
    )
    b = _attempt(
        answers=(
            Answer(question_id="q2", custom_text="because"),
            Answer(question_id="q1", selected_options=["q1_opt1"]),
        ),
        source="modal:card",
    )
    assert a.key() == b.key()


@pytest.mark.parametrize(
    "change",
    [
        {"user_id": "U2"},
        {"pending_id": "p2"},
        {"answers": (Answer(question_id="q1", selected_options=["q1_opt2"]),)},
        {"action": "reject", "answers": ()},
    ],
)
def test_a_different_person_bundle_or_choice_is_a_different_submission(change):
    base = _attempt(answers=(Answer(question_id="q1", selected_options=["q1_opt1"]),))
    assert _attempt(**{"answers": base.answers, **change}).key() != base.key()
