"""Why a card ended (issue 22, point 6): a bundle superseded by a new turn (new instructions
typed in Kandev) leaves the active list while its messages keep ``status: pending`` forever.
With Kandev's Needs-you inbox on, its history says ``superseded`` and the card says the agent
moved on; without it the card gets the generic ended line. Neither reads "pending" as waiting."""

from __future__ import annotations

from kandev_slack.kits.fakeslack import FakeSlack
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    assert_terminal_controls,
    db_question,
    outcome_line,
    start_bot,
    wait_card,
    wait_outcome,
)
from tests.kit.harness import Seeder

SUPERSEDED = "⏹ Ended — the agent was given new instructions before anyone answered"
ENDED = "⏹ Ended — nobody answered (cancelled, expired or the agent moved on)"
#: Without the inbox the card ends once the bundle stayed missing for the reconciler's grace.
GRACE_S = 10.0


def _superseded(factory, seeder: Seeder, fake_slack: FakeSlack, title: str) -> str | None:
    """Post a card, supersede its bundle in Kandev: the card's outcome line once it ended
    (Kandev's transcript still says pending: never read as waiting)."""
    start_bot(factory)
    bundle = seeder([db_question()], title=title)
    card = wait_card(fake_slack, bundle.pending_id)
    seeder.supersede(bundle)
    edited = wait_outcome(fake_slack, card.ts, "⏹", timeout=POLL_S + GRACE_S + 3 * MARGIN_S)
    assert_terminal_controls(edited)
    assert seeder.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
    return outcome_line(edited)


def test_with_the_inbox_on_a_superseded_card_says_the_agent_moved_on(
    inbox_app_factory, inbox_seed: Seeder, fake_slack: FakeSlack
) -> None:
    line = _superseded(inbox_app_factory, inbox_seed, fake_slack, "Superseded, inbox on")
    assert line == SUPERSEDED


def test_without_the_inbox_a_superseded_card_gets_the_generic_ended_line(
    app_factory, seed: Seeder, fake_slack: FakeSlack
) -> None:
    assert _superseded(app_factory, seed, fake_slack, "Superseded, inbox off") == ENDED
