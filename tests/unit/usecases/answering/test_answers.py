"""AnswerService through the fakes at its edges: what Kandev answers decides the card and the
verdict; nothing is recorded when Kandev cannot be reached."""

from __future__ import annotations

import pytest

from kandev_slack.cards import words
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import CardOutcome, CardState
from kandev_slack.kandev.errors import KandevAuthError
from kandev_slack.slack.presenters import said
from kandev_slack.store import Database
from kandev_slack.usecases.answering.admission import Admission, Admitted, Request
from kandev_slack.usecases.answering.answers import AnswerService, Begun
from kandev_slack.usecases.outbox.publisher import Publisher
from tests.kit.factories import ALICE_ID, CHANNEL, make_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway

MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])
POSTGRES = Answer(question_id="q1", selected_options=["q1_opt1"])


def click(admission: Admission, card, answer: Answer = MONGO) -> Admitted:
    """Alice clicks ``answer`` on the card's message, admitted as every click is."""
    return admit_as(admission, card, ALICE_ID, answer)


def test_a_won_answer_resolves_the_card_and_edits_it(
    posted,
    admission: Admission,
    answers: AnswerService,
    fake_kandev: FakeKandev,
    gateway: FakeSlackGateway,
    publisher: Publisher,
    store: Database,
) -> None:
    card = posted(make_bundle())

    verdict = answers.submit(click(admission, card), answers=(MONGO,))

    assert (verdict.kind, said.verdict(verdict)) == ("won", "")
    assert fake_kandev.called("answer") == [
        {"pending_id": card.pending_id, "answers": [MONGO], "transport": "rest"}
    ]
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.state is CardState.ANSWERED
    assert resolved.outcome is not None
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("slack", ALICE_ID)
    assert publisher.work_once()
    [edit] = gateway.called("chat.update")
    assert (edit["channel"], edit["ts"]) == (CHANNEL, card.ts)
    assert f"Answered by <@{ALICE_ID}> in Slack: MongoDB" in str(edit["message"].blocks)
    assert edit["message"].text.startswith("✅ Answered in Slack: MongoDB")


def test_kandev_unreachable_records_nothing_and_a_retry_goes_through(
    posted, admission: Admission, answers: AnswerService, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    fake_kandev.fail("answer", times=1)

    first = answers.submit(click(admission, card), answers=(MONGO,))

    assert first.kind == "not_recorded"
    assert "not* recorded" in said.verdict(first)
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert store.submissions.submissions_for(card.pending_id) == []
    assert answers.submit(click(admission, card), answers=(MONGO,)).kind == "won"


def test_an_answer_after_one_given_in_kandev_loses_and_the_card_shows_the_winner(
    posted, admission: Admission, answers: AnswerService, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    fake_kandev.resolve_in_kandev(card.pending_id, [POSTGRES])

    verdict = answers.submit(click(admission, card, MONGO), answers=(MONGO,))

    assert verdict.kind == "lost"
    assert "PostgreSQL" in said.verdict(verdict)
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert resolved.state is CardState.ANSWERED
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("kandev", None)
    assert resolved.outcome.answers == [POSTGRES]


# ---- every verdict -------------------------------------------------------------------------

BOB_ID = "U0BOB00002"


def admit_as(admission: Admission, card, user: str, answer: Answer = MONGO) -> Admitted:
    """``user`` clicks ``answer`` on the card's message, admitted as every click is."""
    request = Request(
        user_id=user,
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


def reject_form(admission: Admission, card) -> Admitted:
    request = Request(
        user_id=ALICE_ID,
        action="reject",
        source="slack:modal:card",
        via="card",
        pending_id=card.pending_id,
        channel=CHANNEL,
        ts=card.ts,
        form=True,
    )
    admitted = admission.admit(request)
    assert isinstance(admitted, Admitted), admitted
    return admitted


def edits(gateway: FakeSlackGateway, publisher: Publisher) -> list[str]:
    """The text and blocks of every card edit the publisher sends now (the outcome line naming
    who answered is in the blocks; the notification text names nobody)."""
    while publisher.work_once():
        pass
    return [
        call["message"].text + "\n" + str(call["message"].blocks)
        for call in gateway.called("chat.update")
    ]


def audited(store: Database, pending_id: str) -> list[tuple[str, str, str]]:
    """(user, source, result) of the answer use-case's audit entries, oldest first."""
    return [
        (e.user, e.source, e.result)
        for e in reversed(store.audit_log.audit_entries(pending_id))
        if e.action in ("answer", "reject")
    ]


def test_a_won_rejection_resolves_the_card_with_the_reason(
    posted, admission, answers: AnswerService, fake_kandev, gateway, publisher, store
) -> None:
    card = posted(make_bundle())

    verdict = answers.submit(reject_form(admission, card), reason="use the old one")

    assert verdict.kind == "won"
    assert fake_kandev.called("reject")[0]["reason"] == "use the old one"
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.state is CardState.REJECTED
    assert resolved.outcome is not None and resolved.outcome.reason == "use the old one"
    [edit] = edits(gateway, publisher)
    assert f"<@{ALICE_ID}>" in edit and "use the old one" in edit
    assert audited(store, card.pending_id) == [(ALICE_ID, "slack:modal:card", "won")]


def test_an_answer_lost_to_another_slack_user_names_the_winner(
    posted, admission, answers: AnswerService, gateway, publisher, store
) -> None:
    card = posted(make_bundle())
    alice = admit_as(admission, card, ALICE_ID, MONGO)
    bob = admit_as(admission, card, BOB_ID, POSTGRES)

    assert answers.submit(bob, answers=(POSTGRES,)).kind == "won"
    verdict = answers.submit(alice, answers=(MONGO,))

    assert verdict.kind == "lost"
    assert said.verdict(verdict).startswith(f"<@{BOB_ID}> answered first in Slack: PostgreSQL.")
    assert "Your answer was not sent." in said.verdict(verdict)
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("slack", BOB_ID)
    [edit] = edits(gateway, publisher)  # one edit: Bob's win
    assert f"Answered by <@{BOB_ID}> in Slack: PostgreSQL" in edit
    assert audited(store, card.pending_id) == [
        (BOB_ID, "slack:button", "won"),
        (ALICE_ID, "slack:button", "lost"),
    ]


def test_a_second_different_answer_after_ones_own_win_is_already_answered(
    posted, admission, answers: AnswerService, gateway, publisher, store
) -> None:
    card = posted(make_bundle())
    first = admit_as(admission, card, ALICE_ID, POSTGRES)
    second = admit_as(admission, card, ALICE_ID, MONGO)

    assert answers.submit(first, answers=(POSTGRES,)).kind == "won"
    verdict = answers.submit(second, answers=(MONGO,))

    assert verdict.kind == "already_answered"
    assert said.verdict(verdict) == "You already answered this: PostgreSQL. Nothing more was sent."
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert resolved.outcome.by_user == ALICE_ID and resolved.outcome.answers == [POSTGRES]
    assert len(edits(gateway, publisher)) == 1


def test_an_answer_to_a_bundle_that_ended_ends_the_card(
    posted, admission, answers: AnswerService, fake_kandev, gateway, publisher, store
) -> None:
    card = posted(make_bundle())
    fake_kandev.end(card.pending_id, "cancelled")

    verdict = answers.submit(click(admission, card), answers=(MONGO,))

    assert (verdict.kind, said.verdict(verdict)) == ("ended", words.ended_message())
    assert store.cards.get(card.pending_id).state is CardState.ENDED  # type: ignore[union-attr]
    [edit] = edits(gateway, publisher)
    assert "Ended — nobody answered" in edit
    assert audited(store, card.pending_id) == [(ALICE_ID, "slack:button", "ended")]


def test_an_answer_to_a_bundle_kandev_no_longer_shows_makes_the_card_unavailable(
    posted, admission, answers: AnswerService, fake_kandev, gateway, publisher, store
) -> None:
    card = posted(make_bundle())
    del fake_kandev.active[card.pending_id]  # gone without a trace (deleted, or not visible)

    verdict = answers.submit(click(admission, card), answers=(MONGO,))

    assert (verdict.kind, said.verdict(verdict)) == ("unavailable", words.unavailable_message())
    assert store.cards.get(card.pending_id).state is CardState.UNAVAILABLE  # type: ignore[union-attr]
    [edit] = edits(gateway, publisher)
    assert "Unavailable — Kandev no longer shows this question" in edit
    assert store.submissions.submissions_for(card.pending_id)[0].finished


def test_kandevs_400_is_invalid_and_leaves_the_card_open(
    posted, admission, answers: AnswerService, fake_kandev, gateway, publisher, store
) -> None:
    card = posted(make_bundle())
    fake_kandev.refuse_next(card.pending_id, "answers[0]: unknown option")

    verdict = answers.submit(click(admission, card), answers=(MONGO,))

    assert verdict.kind == "invalid"
    assert said.verdict(verdict) == words.invalid_message("answers[0]: unknown option")
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert edits(gateway, publisher) == []
    assert audited(store, card.pending_id) == [(ALICE_ID, "slack:button", "invalid")]


@pytest.mark.parametrize(
    ("sent", "says"),
    [
        ((), "every question needs an answer"),
        ((Answer(question_id="q1"),), "every question needs an answer"),
        (
            (Answer(question_id="q1", selected_options=["q7_opt7"]),),
            "that option is not part of this question",
        ),
        (
            (Answer(question_id="q1", custom_text="x" * (words.MAX_TEXT + 1)),),
            f"Your text is {words.MAX_TEXT + 1:,} characters",
        ),
    ],
    ids=["no-answer", "empty-answer", "unknown-option", "too-long-text"],
)
def test_what_kandev_would_refuse_is_invalid_before_anything_is_sent(
    posted, admission, answers: AnswerService, fake_kandev, store, sent, says: str
) -> None:
    card = posted(make_bundle())
    form = Request(
        user_id=ALICE_ID,
        action="answer",
        source="slack:modal:card",
        via="card",
        pending_id=card.pending_id,
        channel=CHANNEL,
        ts=card.ts,
        form=True,
    )
    admitted = admission.admit(form)
    assert isinstance(admitted, Admitted)

    verdict = answers.submit(admitted, answers=sent)

    assert verdict.kind == "invalid" and says in said.verdict(verdict)
    assert fake_kandev.called("answer") == []
    assert store.submissions.submissions_for(card.pending_id) == []
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert audited(store, card.pending_id) == [(ALICE_ID, "slack:modal:card", "invalid")]


def test_a_too_long_reason_is_invalid_before_anything_is_sent(
    posted, admission, answers: AnswerService, fake_kandev, store
) -> None:
    card = posted(make_bundle())

    verdict = answers.submit(reject_form(admission, card), reason="n" * (words.MAX_TEXT + 1))

    assert verdict.kind == "invalid"
    assert said.verdict(verdict) == words.too_long_message(words.MAX_TEXT + 1)
    assert fake_kandev.called("reject") == []


def test_a_refused_token_records_nothing_and_says_so(
    posted, admission, answers: AnswerService, fake_kandev, gateway, publisher, store
) -> None:
    card = posted(make_bundle())
    fake_kandev.fail("reject", KandevAuthError(), times=1)

    verdict = answers.submit(reject_form(admission, card), reason="no")

    assert verdict.kind == "not_recorded"
    assert said.verdict(verdict) == words.not_recorded_message(action="reject", cause="auth")
    assert store.submissions.submissions_for(card.pending_id) == []
    assert edits(gateway, publisher) == []
    [entry] = [e for e in store.audit_log.audit_entries(card.pending_id) if e.action == "reject"]
    assert entry.result == "not_recorded" and "401" in entry.detail
    assert answers.submit(reject_form(admission, card), reason="no").kind == "won"


def test_the_same_submission_again_is_a_duplicate_and_reaches_kandev_once(
    posted, admission, answers: AnswerService, fake_kandev, gateway, publisher, store
) -> None:
    card = posted(make_bundle())
    first = click(admission, card)
    again = click(admission, card)  # a redelivery, admitted before the first was answered

    assert answers.submit(first, answers=(MONGO,)).kind == "won"
    verdict = answers.submit(again, answers=(MONGO,))

    assert (verdict.kind, said.verdict(verdict)) == ("duplicate", "")
    assert verdict.card is not None and verdict.card.state is CardState.ANSWERED
    assert len(fake_kandev.called("answer")) == 1
    assert len(store.submissions.submissions_for(card.pending_id)) == 1
    assert len(edits(gateway, publisher)) == 1
    assert [r for _u, _s, r in audited(store, card.pending_id)] == ["won", "duplicate"]


def test_a_win_sync_saw_first_is_attributed_to_the_slack_user(
    posted, admission, answers: AnswerService, gateway, publisher, store
) -> None:
    card = posted(make_bundle())
    begun = answers.begin(click(admission, card), answers=(MONGO,))
    assert isinstance(begun, Begun)
    # Sync noticed the resolution (as "in Kandev") before Kandev's reply came back here.
    in_kandev = CardOutcome(
        state=CardState.ANSWERED, via="kandev", answers=[MONGO], at=card.updated_at
    )
    assert store.cards.transition(card.pending_id, in_kandev)

    verdict = answers.complete(begun)

    assert verdict.kind == "won"
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("slack", ALICE_ID)
    [edit] = edits(gateway, publisher)
    assert f"Answered by <@{ALICE_ID}> in Slack: MongoDB" in edit


# ---- a maybe-delivered submission and a winner like it ----------------------------------------


def test_a_maybe_delivered_rejection_after_an_earlier_one_in_kandev_is_not_credited(
    posted, admission, answers: AnswerService, fake_kandev, gateway, publisher, store
) -> None:
    """Someone rejected in Kandev seconds before Alice's rejection was first sent; her call got
    a 502 (maybe delivered) and the retry learned ``claimed:false``, rejected: not hers."""
    card = posted(make_bundle())
    fake_kandev.reject_in_kandev(card.pending_id, ago_s=5.0)
    fake_kandev.maybe_delivered(card.pending_id)

    verdict = answers.submit(reject_form(admission, card), reason="use the old one")

    assert verdict.kind == "lost"
    assert said.verdict(verdict) == ("Rejected in Kandev first. Your rejection was not sent.")
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.state is CardState.REJECTED
    assert resolved.outcome is not None
    assert (resolved.outcome.via, resolved.outcome.by_user, resolved.outcome.reason) == (
        "kandev",
        None,
        "",
    )
    [edit] = edits(gateway, publisher)
    assert "Rejected in Kandev" in edit and "use the old one" not in edit
    assert audited(store, card.pending_id) == [(ALICE_ID, "slack:modal:card", "lost")]


def test_a_maybe_delivered_rejection_that_cannot_be_told_from_another_is_credited_in_kandev(
    posted, admission, answers: AnswerService, fake_kandev, gateway, publisher, store
) -> None:
    """A rejection Kandev reports without saying when it was recorded may be hers or not (as
    one recorded within the clocks' tolerance of her first send): "in Kandev", and she hears
    someone else may have answered first."""
    card = posted(make_bundle())
    fake_kandev.reject_in_kandev(card.pending_id, ago_s=None)
    fake_kandev.maybe_delivered(card.pending_id)

    verdict = answers.submit(reject_form(admission, card), reason="use the old one")

    assert verdict.kind == "undecided"
    told = said.verdict(verdict)
    assert "someone else may have answered first" in told
    assert "with your reason" not in told.replace("your rejection and your reason", "")
    assert words.result_title(verdict.kind) == "Maybe not sent"
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None and resolved.outcome is not None
    assert (resolved.outcome.via, resolved.outcome.by_user) == ("kandev", None)
    [edit] = edits(gateway, publisher)
    assert "Rejected in Kandev" in edit and "use the old one" not in edit
    assert audited(store, card.pending_id) == [(ALICE_ID, "slack:modal:card", "undecided")]
    assert store.submissions.won_submission(card.pending_id) is None


def test_an_answer_whose_lease_ran_out_before_the_call_is_not_sent(
    posted, admission, answers: AnswerService, fake_kandev, store: Database
) -> None:
    # The process froze between recording the answer and calling Kandev, past its lease:
    # crash recovery (on another replica) took it over, and re-sends it itself.
    card = posted(make_bundle())
    begun = answers.begin(click(admission, card), answers=(MONGO,))
    assert isinstance(begun, Begun)
    store.submissions.release_submissions([begun.key])  # its lease is long gone
    assert store.submissions.take_over_submission(begun.key, older_than_s=10)

    verdict = answers.complete(begun)

    assert verdict.kind == "unconfirmed"
    assert fake_kandev.called("answer") == []
    left = store.submissions.get_submission(begun.key)
    assert left is not None and not left.finished and left.resends == 1
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
