"""AnswerService through the fakes at its edges: what Kandev answers decides the card and the
verdict; nothing is recorded when Kandev cannot be reached."""

from __future__ import annotations

from bot.answers import AnswerService, Attempt
from bot.domain import CardState
from bot.kandev.models import Answer
from bot.publisher import Publisher
from bot.store import Store
from tests.factories import ALICE_ID, CHANNEL, make_bundle
from tests.fakes import FakeKandev, FakeSlackGateway

MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])
POSTGRES = Answer(question_id="q1", selected_options=["q1_opt1"])


def click(pending_id: str, answer: Answer = MONGO) -> Attempt:
    return Attempt(pending_id, ALICE_ID, "answer", "button", answers=(answer,), channel=CHANNEL)


def test_a_won_answer_resolves_the_card_and_edits_it(
    posted,
    answers: AnswerService,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Store,
) -> None:
    card = posted(make_bundle())

    verdict = answers.submit(click(card.pending_id))

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
    posted, answers: AnswerService, fake_kandev: FakeKandev, store: Store
) -> None:
    card = posted(make_bundle())
    fake_kandev.fail("answer", times=1)

    first = answers.submit(click(card.pending_id))

    assert first.kind == "not_recorded"
    assert "not* recorded" in first.message
    assert store.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert store.submissions_for(card.pending_id) == []
    assert answers.submit(click(card.pending_id)).kind == "won"


def test_an_answer_after_one_given_in_kandev_loses_and_the_card_shows_the_winner(
    posted, answers: AnswerService, fake_kandev: FakeKandev, store: Store
) -> None:
    card = posted(make_bundle())
    fake_kandev.resolve_in_kandev(card.pending_id, [POSTGRES])

    verdict = answers.submit(click(card.pending_id, MONGO))

    assert verdict.kind == "lost"
    assert "PostgreSQL" in verdict.message
    resolved = store.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert resolved.state is CardState.ANSWERED
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("kandev", None)
    assert resolved.outcome.answers == [POSTGRES]
