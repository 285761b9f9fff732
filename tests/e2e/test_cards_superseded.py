"""Why a card ended (issue 22, point 6): a bundle superseded by a new turn (new instructions
typed in Kandev) leaves the active list while its messages keep ``status: pending`` forever.
With Kandev's Needs-you inbox on, its history says ``superseded`` and the card says the agent
moved on; without it the card gets the generic ended line. Neither reads "pending" as waiting."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fakeslack import FakeSlack
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
from tests.kit.harness import InProcessBot, KandevServer, Seeder, bot_env

SUPERSEDED = "⏹ Ended — the agent moved on (new instructions)"
ENDED = "⏹ Ended — nobody answered (cancelled, expired or the agent moved on)"
#: Without the inbox the card ends once the bundle stayed missing for the reconciler's grace.
GRACE_S = 10.0


@pytest.fixture
def inbox_seed(kandev_inbox: KandevServer) -> Iterator[Seeder]:
    seeder = Seeder(kandev_inbox)
    yield seeder
    seeder.cleanup()


@pytest.fixture
def inbox_app_factory(
    fake_slack: FakeSlack, kandev_inbox: KandevServer, tmp_path: Path
) -> Iterator[Callable[..., InProcessBot]]:
    started: list[InProcessBot] = []

    def make(**overrides: str) -> InProcessBot:
        url = f"sqlite:///{tmp_path / 'bot.db'}"
        app = InProcessBot(bot_env(fake_slack, kandev_inbox, url, mode="http", **overrides))
        started.append(app)
        return app.start()

    yield make
    for app in started:
        app.stop()


def test_with_the_inbox_on_a_superseded_card_says_the_agent_moved_on(
    inbox_app_factory, inbox_seed: Seeder, fake_slack: FakeSlack
) -> None:
    start_bot(inbox_app_factory)
    bundle = inbox_seed([db_question()], title="Superseded with the inbox on")
    card = wait_card(fake_slack, bundle.pending_id)

    inbox_seed.supersede(bundle)
    edited = wait_outcome(fake_slack, card.ts, "⏹", timeout=POLL_S + GRACE_S + MARGIN_S)
    assert outcome_line(edited) == SUPERSEDED
    assert_terminal_controls(edited)
    # Kandev's transcript still says pending: that was not read as waiting.
    final = inbox_seed.server.final_status(bundle.task_id, bundle.pending_id)
    assert final["status"] == "pending"


def test_without_the_inbox_a_superseded_card_gets_the_generic_ended_line(
    app_factory, seed: Seeder, fake_slack: FakeSlack
) -> None:
    start_bot(app_factory)
    bundle = seed([db_question()], title="Superseded with the inbox off")
    card = wait_card(fake_slack, bundle.pending_id)

    seed.supersede(bundle)
    edited = wait_outcome(fake_slack, card.ts, "⏹", timeout=POLL_S + GRACE_S + 3 * MARGIN_S)
    assert outcome_line(edited) == ENDED
    assert_terminal_controls(edited)
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
