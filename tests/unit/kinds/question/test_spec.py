"""A question bundle's spec: validated, sent and read back with the clarification calls."""

from __future__ import annotations

from typing import Any

from kandev_slack.core.clarification import Answer
from kandev_slack.kinds.question.spec import QuestionSpec
from kandev_slack.kinds.spec import Invalid, Try
from tests.kit.factories import DB_PROMPT, MONGO, NOW, PENDING_ID, make_card

SPEC = QuestionSpec()


class Calls:
    """Records which clarification call the spec makes."""

    permissions: Any = None

    def __init__(self) -> None:
        self.made: list[tuple[str, Any]] = []

    def answer(self, pending_id: str, answers: list[Answer], **kw: Any) -> str:
        self.made.append(("answer", answers))
        return "answered"

    def reject(self, pending_id: str, reason: str = "", **kw: Any) -> str:
        self.made.append(("reject", reason))
        return "rejected"

    def recorded(self, task_id: str, pending_id: str, **kw: Any) -> str | None:
        self.made.append(("recorded", kw["answers"]))
        return "recorded"


def test_it_owns_the_unprefixed_keys() -> None:
    assert SPEC.owns_key(PENDING_ID) and not SPEC.owns_key("perm:r1")


def test_an_answer_is_sent_and_a_rejection_rejects() -> None:
    card, calls = make_card(), Calls()
    answer = Try(PENDING_ID, "answer", (MONGO,))
    assert SPEC.send(calls, card, answer, first_sent=NOW, resend=False) == "answered"
    assert SPEC.send(calls, card, Try(PENDING_ID, "reject", (), "no"), first_sent=NOW, resend=True)
    assert SPEC.read_back(calls, card, Try(PENDING_ID, "reject"), first_sent=NOW) == "recorded"
    assert [m[0] for m in calls.made] == ["answer", "reject", "recorded"]
    assert calls.made[-1][1] is None  # a rejection is read back without answers


def test_local_validation() -> None:
    card = make_card()
    assert SPEC.invalid(card, Try(PENDING_ID, "approve"), 10) == Invalid("not_answer_or_reject")
    assert SPEC.invalid(card, Try(PENDING_ID, "reject", (), "x" * 11), 10) == Invalid(length=11)
    assert SPEC.invalid(card, Try(PENDING_ID, "answer"), 10) == Invalid("unanswered")
    assert DB_PROMPT  # the default card asks the database question


def test_a_click_may_name_only_an_offered_option() -> None:
    card = make_card()
    assert SPEC.refusal(card, "approve", "card", None) == "tampered"
    assert SPEC.refusal(card, "answer", "card", None) is None
    assert SPEC.refusal(card, "answer", "card", ("q1", "nope")) == "tampered"
    assert SPEC.refusal(card, "answer", "card", ("q1", "q1_opt2")) is None
