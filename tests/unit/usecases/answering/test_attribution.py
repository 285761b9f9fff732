"""Who an answer is credited to (issue 32 §6): a person acting with their own Kandev account
has it recorded with the card's outcome and in the audit; a Slack win sync noticed first (so
credited without the account) gains it when the winner's own reply comes back; with the bot's
account, no Kandev account is named."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from kandev_slack.core.domain import CardOutcome, CardState
from kandev_slack.store import Database
from kandev_slack.store.records import KandevLink
from kandev_slack.usecases.answering.admission import Admission, Admitted
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.identity import Acting
from kandev_slack.usecases.outbox.publisher import Publisher
from tests.kit.factories import ALICE_ID, make_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway
from tests.unit.usecases.answering.test_answers import MONGO, click

ANA = KandevLink(
    slack_user_id=ALICE_ID,
    kandev_user_id="u-ana",
    display_name="Ana",
    email="ana@example.com",
    token="kandev_pat_0123abcd_" + "A" * 43,
    linked_at=datetime(2026, 12, 1, tzinfo=UTC),
)


def as_ana(admitted: Admitted, kandev: FakeKandev) -> Admitted:
    """The same click, made with Ana's own Kandev account (her link's client)."""
    return dataclasses.replace(admitted, acting=Acting(kandev, ANA))


def test_a_linked_persons_win_names_their_kandev_account_on_the_card_and_in_the_audit(
    posted,
    admission: Admission,
    answers: AnswerService,
    fake_kandev: FakeKandev,
    publisher: Publisher,
    gateway: FakeSlackGateway,
    store: Database,
) -> None:
    card = posted(make_bundle())

    verdict = answers.submit(as_ana(click(admission, card), fake_kandev), answers=(MONGO,))

    assert verdict.kind == "won"
    outcome = store.cards.get(card.pending_id).outcome
    assert (outcome.via, outcome.by_user, outcome.kandev_user, outcome.kandev_name) == (
        "slack",
        ALICE_ID,
        "u-ana",
        "Ana",
    )
    [entry] = [e for e in store.audit_log.audit_entries(card.pending_id) if e.action == "answer"]
    assert (entry.user, entry.result, entry.kandev_user) == (ALICE_ID, "won", "u-ana")
    assert publisher.work_once()
    [edit] = gateway.called("chat.update")
    assert f"Answered by <@{ALICE_ID}> (Kandev: Ana) in Slack: MongoDB" in str(
        edit["message"].blocks
    )


def test_a_win_sync_credited_first_gains_the_kandev_account_it_was_made_with(
    posted,
    admission: Admission,
    answers: AnswerService,
    fake_kandev: FakeKandev,
    publisher: Publisher,
    gateway: FakeSlackGateway,
    store: Database,
) -> None:
    card = posted(make_bundle())
    admitted = as_ana(click(admission, card), fake_kandev)
    # Sync saw Kandev's record first and credited Alice from her submission, without the
    # Kandev account (it cannot know it): the card says so already.
    synced = CardOutcome(
        state=CardState.ANSWERED,
        via="slack",
        by_user=ALICE_ID,
        answers=[MONGO],
        at=datetime.now(UTC),
    )
    assert store.cards.transition(card.pending_id, synced)

    assert answers.submit(admitted, answers=(MONGO,)).kind == "won"

    outcome = store.cards.get(card.pending_id).outcome
    assert (outcome.by_user, outcome.kandev_user, outcome.kandev_name) == (ALICE_ID, "u-ana", "Ana")
    assert publisher.work_once()
    edits = [str(c["message"].blocks) for c in gateway.called("chat.update")]
    assert any("(Kandev: Ana)" in blocks for blocks in edits)


def test_with_the_bots_account_no_kandev_account_is_named(
    posted, admission: Admission, answers: AnswerService, store: Database
) -> None:
    card = posted(make_bundle())

    assert answers.submit(click(admission, card), answers=(MONGO,)).kind == "won"

    outcome = store.cards.get(card.pending_id).outcome
    assert (outcome.by_user, outcome.kandev_user, outcome.kandev_name) == (ALICE_ID, "", "")
    [entry] = [e for e in store.audit_log.audit_entries(card.pending_id) if e.action == "answer"]
    assert entry.kandev_user is None


def test_a_win_sync_showed_as_made_in_kandev_is_shown_as_made_in_slack(
    posted, admission: Admission, answers: AnswerService, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    admitted = as_ana(click(admission, card), fake_kandev)
    # Sync read Kandev's record while her submission was unfinished (its lease ran out): the
    # account Kandev credits is hers, so the card named her, as made in Kandev.
    synced = CardOutcome(
        state=CardState.ANSWERED,
        via="kandev",
        by_user=ALICE_ID,
        answers=[MONGO],
        at=datetime.now(UTC),
        kandev_user="u-ana",
        kandev_name="Ana",
    )
    assert store.cards.transition(card.pending_id, synced)

    assert answers.submit(admitted, answers=(MONGO,)).kind == "won"

    outcome = store.cards.get(card.pending_id).outcome
    assert (outcome.via, outcome.by_user, outcome.kandev_user) == ("slack", ALICE_ID, "u-ana")
