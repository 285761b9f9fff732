"""Restart with changes made while the bot was down: nothing is posted twice, every card ends up
showing what happened in Kandev meanwhile, and the bundle asked meanwhile is posted once."""

from __future__ import annotations

from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    assert_terminal_controls,
    card_posts,
    more_options,
    outcome_line,
    start_bot,
    wait_card,
    wait_outcome,
)
from tests.kit.harness import CHANNEL, option_id

ENDED = "⏹ Ended — nobody answered (cancelled, expired or the agent moved on)"
WAIT_AFTER_START_S = POLL_S + MARGIN_S + 3


def test_restart_reconciles_changes_made_while_down(bot_factory, seed, fake_slack):
    bot = start_bot(bot_factory)
    answered, cancelled, untouched = seed.many(3)
    cards = {
        b.pending_id: wait_card(fake_slack, b.pending_id) for b in (answered, cancelled, untouched)
    }
    bot.stop()

    response = seed.server.answer(answered.pending_id, {"q1": option_id(1, 2)})
    assert response.status_code == 200 and response.json()["claimed"] is True
    seed.server.cancel(cancelled.pending_id)
    newcomer = seed(title="Asked while the bot was down")
    posts_before = len(fake_slack.calls("chat.postMessage"))

    bot.start()
    card = wait_outcome(fake_slack, cards[answered.pending_id].ts, "✅", timeout=WAIT_AFTER_START_S)
    assert outcome_line(card) == "✅ Answered in Kandev: Option 1.2"
    assert_terminal_controls(card)
    card = wait_outcome(fake_slack, cards[cancelled.pending_id].ts, "⏹", timeout=WAIT_AFTER_START_S)
    assert outcome_line(card) == ENDED
    assert_terminal_controls(card)
    new_card = wait_card(fake_slack, newcomer.pending_id, timeout=WAIT_AFTER_START_S)
    assert "Asked while the bot was down" in new_card.all_text

    fake_slack.settle(quiet=POLL_S + 0.5, timeout=20)
    still_open = fake_slack.message(CHANNEL, cards[untouched.pending_id].ts)
    assert outcome_line(still_open) is None
    assert "Reject…" in more_options(still_open)
    for bundle in (answered, cancelled, untouched, newcomer):
        assert len(card_posts(fake_slack, bundle.pending_id)) == 1, bundle
    # Only the newcomer was posted after the restart.
    assert len(fake_slack.calls("chat.postMessage")) == posts_before + 1
    assert len(fake_slack.messages(CHANNEL)) == 4
