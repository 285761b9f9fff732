"""AnswerService through the fakes at its edges: what Kandev answers decides the card and the
verdict; nothing is recorded when Kandev cannot be reached."""

from __future__ import annotations

from bot.admission import Admission, Admitted, Request
from bot.answers import AnswerService
from bot.domain import CardState
from bot.kandev.models import Answer
from bot.publisher import Publisher
from bot.store import Store
from tests.factories import ALICE_ID, CHANNEL, make_bundle
from tests.fakes import FakeKandev, FakeSlackGateway

MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])
POSTGRES = Answer(question_id="q1", selected_options=["q1_opt1"])


def click(admission: Admission, card, answer: Answer = MONGO) -> Admitted:
    """Alice clicks ``answer`` on the card's message, admitted as every click is."""
    request = Request(
        user_id=ALICE_ID,
        action="answer",
        source="slack:button",
        via="card",
        pending_id=card.pending_id,
        channel=CHANNEL,
        ts=card.ts,
        option=(answer.question_id, answer.selected_options[0]),
    )
    admitted = admission.admit(request)
    assert isinstance(admitted, Admitted), admitted
    return admitted


def test_a_won_answer_resolves_the_card_and_edits_it(
    posted,
    admission: Admission,
    answers: AnswerService,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Store,
) -> None:
    card = posted(make_bundle())

    verdict = answers.submit(click(admission, card), answers=(MONGO,))

    assert (verdict.kind, verdict.message) == ("won", "")
    assert fake_kandev.called("answer") == [
        {"pending_id": card.pending_id, "answers": [MONGO], "transport": "rest"}
    ]
    resolved = store.get(card.pending_id)
    assert resolved is not None and resolved.state is CardState.ANSWERED
    assert resolved.outcome is not None
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("slack", ALICE_ID)
    assert publisher.work_once()
    [edit] = gateway.called("chat.update")
    assert (edit["channel"], edit["ts"]) == (CHANNEL, card.ts)
    assert f"Answered by <@{ALICE_ID}> in Slack: MongoDB" in edit["message"].text


def test_kandev_unreachable_records_nothing_and_a_retry_goes_through(
    posted, admission: Admission, answers: AnswerService, fake_kandev: FakeKandev, store: Store
) -> None:
    card = posted(make_bundle())
    fake_kandev.fail("answer", times=1)

    first = answers.submit(click(admission, card), answers=(MONGO,))

    assert first.kind == "not_recorded"
    assert "not* recorded" in first.message
    assert store.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert store.submissions_for(card.pending_id) == []
    assert answers.submit(click(admission, card), answers=(MONGO,)).kind == "won"


def test_an_answer_after_one_given_in_kandev_loses_and_the_card_shows_the_winner(
    posted, admission: Admission, answers: AnswerService, fake_kandev: FakeKandev, store: Store
) -> None:
    card = posted(make_bundle())
    fake_kandev.resolve_in_kandev(card.pending_id, [POSTGRES])

    verdict = answers.submit(click(admission, card, MONGO), answers=(MONGO,))

    assert verdict.kind == "lost"
    assert "PostgreSQL" in verdict.message
    resolved = store.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert resolved.state is CardState.ANSWERED
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("kandev", None)
    assert resolved.outcome.answers == [POSTGRES]
