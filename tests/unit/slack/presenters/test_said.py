"""The words for each kind a use-case returns, chosen at the edge from
kandev_slack/cards/words.py."""

from __future__ import annotations

from typing import get_args

import pytest

from kandev_slack.cards import words
from kandev_slack.kinds.spec import Found
from kandev_slack.slack.presenters import said
from kandev_slack.usecases.answering.admission import Refusal, RefusalKind
from kandev_slack.usecases.answering.verdicts import Problem, Verdict, VerdictKind
from tests.kit.factories import ALICE_ID, answered, make_card


@pytest.mark.parametrize("kind", get_args(VerdictKind))
def test_every_verdict_kind_has_its_words(kind: VerdictKind) -> None:
    verdict = Verdict(kind, make_card(), outcome=answered(ALICE_ID), problem=Problem("no"))
    text = said.verdict(verdict)
    assert (text == "") == (kind in ("won", "duplicate")), text


@pytest.mark.parametrize("found", get_args(Found))
def test_every_kind_of_local_problem_has_its_words(found: Found) -> None:
    """A kind's local validation returns what it found (kandev_slack/kinds/spec.py); the words
    are chosen here, and survive the finished submission's round trip (a resubmission)."""
    problem = Problem(found=found)
    text = said.problem(problem)
    assert text == words.invalid_message(words.FOUND_DETAILS[found])
    assert words.FOUND_DETAILS[found] and text.endswith(words.FOUND_DETAILS[found])
    assert Problem.decode(problem.encode()) == problem
    assert said.problem(Problem.decode(problem.encode())) == text


def test_a_stored_problem_of_an_older_version_reads_as_before() -> None:
    assert Problem.decode('{"detail": "every question needs an answer", "length": null}') == (
        Problem("every question needs an answer")
    )
    assert Problem.decode('{"detail": "", "length": 9, "found": "bogus"}') == Problem(length=9)


@pytest.mark.parametrize("kind", get_args(RefusalKind))
def test_every_refusal_kind_has_its_words(kind: RefusalKind) -> None:
    refusal = Refusal(kind, make_card(), outcome=answered(ALICE_ID), channel="C0CARD")
    text = said.refusal(refusal)
    assert (text == "") == (kind == "redelivered"), text  # Slack's copy: told once already


def test_the_data_a_verdict_carries_chooses_the_words() -> None:
    card = make_card()
    lost = Verdict("lost", card, action="reject", outcome=answered("U0BOB"))
    assert said.verdict(lost) == words.lost_message(card.bundle, answered("U0BOB"), action="reject")
    busy = Verdict("not_recorded", card, cause="refused", retry_after=3)
    assert said.verdict(busy) == words.not_recorded_message(cause="refused", retry_after=3)
    gave_up = Verdict("unconfirmed", card, action="reject", gave_up=True)
    assert said.verdict(gave_up) == words.gave_up_message(action="reject", recorded=None)
    checking = Verdict("duplicate", card, checking=True)
    assert said.verdict(checking) == words.still_checking_message()
    too_long = Verdict("invalid", card, problem=Problem(length=20_000))
    assert said.verdict(too_long) == words.too_long_message(20_000)


def test_a_problem_kept_as_data_and_one_kept_worded_by_an_older_version() -> None:
    problem = Problem("answers[0]: unknown option")
    assert Problem.decode(problem.encode()) == problem
    legacy = Problem.decode("Kandev did not accept your answer: nope")
    assert said.problem(legacy) == "Kandev did not accept your answer: nope"
    assert said.problem(problem) == words.invalid_message("answers[0]: unknown option")


def test_a_recovered_win_is_told_as_recovered() -> None:
    won = Verdict("won", make_card())
    assert said.recovered(won) == words.recovered_message("", won=True)


@pytest.mark.parametrize("kind", ["forbidden", "unverifiable", "wrong_channel"])
def test_a_refusal_on_an_approval_speaks_of_approvals(kind: RefusalKind) -> None:
    on_approval = said.refusal(Refusal(kind, None, action="approve", channel="C0CARD"))
    on_question = said.refusal(Refusal(kind, make_card(), action="answer", channel="C0CARD"))
    assert "approval" in on_approval and "question" not in on_approval
    assert "question" in on_question and "approval" not in on_question
