"""An item resolved as Kandev records it, credited to the Slack person whose submission won
(kandev_slack/usecases/intake/ended.py): the Kandev account Kandev credits (an approval's
actor) stays named when it is the one that person linked, and is dropped when it is not."""

from __future__ import annotations

from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import CardState
from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent
from kandev_slack.usecases.intake.ended import credit_slack_winner
from tests.kit.factories import ALICE_ID, make_card, make_outcome

BOB = "U0BOB00002"
ALLOW = Answer(question_id="", selected_options=["allow_once"])


def won_by(store: Database, user: str, pending_id: str) -> None:
    content = SubmissionContent(action="approve", answers=[ALLOW])
    assert store.submissions.begin_submission(pending_id, f"k-{user}", user, content)
    assert store.submissions.finish_submission(f"k-{user}", "won")


def test_the_slack_winner_is_credited_with_the_kandev_account_they_linked(store: Database) -> None:
    card = make_card()
    kandevs = make_outcome(
        CardState.ANSWERED, by_user=ALICE_ID, kandev_user="u-ana", kandev_name="Ana"
    )
    assert credit_slack_winner(store.submissions, card, kandevs) is kandevs  # nobody won here

    won_by(store, ALICE_ID, card.pending_id)
    credited = credit_slack_winner(store.submissions, card, kandevs)
    assert (credited.via, credited.by_user, credited.kandev_user, credited.kandev_name) == (
        "slack",
        ALICE_ID,
        "u-ana",
        "Ana",
    )


def test_a_kandev_account_that_is_not_the_slack_winners_is_not_shown_as_theirs(
    store: Database,
) -> None:
    card = make_card()
    won_by(store, BOB, card.pending_id)
    for other in (
        make_outcome(CardState.ANSWERED, by_user=ALICE_ID, kandev_user="u-ana", kandev_name="Ana"),
        make_outcome(CardState.ANSWERED, kandev_user="u-ben", kandev_name="Ben"),  # not linked
    ):
        credited = credit_slack_winner(store.submissions, card, other)
        assert (credited.via, credited.by_user, credited.kandev_user, credited.kandev_name) == (
            "slack",
            BOB,
            "",
            "",
        )
