"""Two replicas on one PostgreSQL database (issue 22's rule: each new path works on replicas):
three agents asking the same question show each other's cards whichever replica posted them;
an answer won on one replica offers Send to all, whose click reaches both replicas at once (a
double click spread over them) and answers each other bundle once."""

from __future__ import annotations

import threading

import pytest

from kandev_slack.kits.fakeslack import ALICE
from tests.e2e.helpers import (
    MARGIN_S,
    db_question,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.test_answer_all import OFFER, assert_in_thread, wait_group
from tests.kit.harness import CHANNEL


@pytest.mark.postgres
def test_send_to_all_clicked_on_two_replicas_answers_each_bundle_once(
    pg_url, bot_factory, seed, fake_slack, slack_driver
):
    bots = [start_bot(bot_factory, db_url=pg_url) for _ in range(2)]
    bundles = [seed([db_question()], title=f"Replicated {n}") for n in (1, 2, 3)]
    cards = [wait_card(fake_slack, b.pending_id).ts for b in bundles]
    wait_group(fake_slack, cards[0], "🧵 2 more agents asked this: <")
    for ts in cards[1:]:
        assert_in_thread(fake_slack, ts, cards[0])
    first, second = (slack_driver(bot.events_url) for bot in bots)

    first.click(CHANNEL, cards[0], text="PostgreSQL", user=ALICE)
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)
    clicks = [
        threading.Thread(
            target=driver.click_ephemeral, args=(offer,), kwargs={"text": "Send to all 2"}
        )
        for driver in (first, second)
    ]
    for click in clicks:
        click.start()
    for click in clicks:
        click.join(10)
    for bundle, ts in zip(bundles[1:], cards[1:], strict=True):
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered", timeout=15)
        assert response_of(final, "db")["selected_options"] == ["q1_opt1"]
        # A bound, not a target: two replicas share each channel's pace (a post or edit a
        # second), and the group lines of three cards are edited too.
        edited = wait_outcome(fake_slack, ts, "✅", timeout=30 + MARGIN_S)
        assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: PostgreSQL"
    fake_slack.settle(quiet=1.0, timeout=10)
    for ts in cards[1:]:
        # Edited to its outcome once (besides the group-line edits while it waited).
        edits = [
            c
            for c in fake_slack.calls("chat.update")
            if c.ok and c.params["ts"] == ts and "✅" in str(c.params.get("text"))
        ]
        assert len(edits) == 1, edits
    [now] = [e for e in fake_slack.ephemerals(user=ALICE.id) if e.message_ts == offer.message_ts]
    assert "✅ Sent “PostgreSQL” to 2 agents." in now.all_text
