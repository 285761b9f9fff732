"""Two replicas on one PostgreSQL database: each reminder and the escalation are sent exactly
once, and a resolution in Kandev edits the channel card and the escalation card once each."""

from __future__ import annotations

import pytest

from tests.e2e.helpers import MARGIN_S, POLL_S, db_question, start_bot, wait_card, wait_outcome
from tests.e2e.test_followups import (
    LEADS,
    NAMED,
    REMINDER,
    reminders,
    routing_file,
    thread_replies,
)
from tests.kit.harness import CHANNEL

REPLICAS = 2


@pytest.mark.postgres
@pytest.mark.fault("two replicas racing for every reminder and escalation step", guarantee=5)
def test_each_reminder_and_escalation_once_with_two_replicas(
    pg_url,  # first: its schema is dropped only after the bots are stopped
    bot_factory,
    seed,
    fake_slack,
    reliability,
    tmp_path,
):
    fake_slack.add_channel(LEADS, "leads")
    config = routing_file(
        tmp_path,
        'remind_after = "2s"\nremind_every = "2s"\nmax_reminders = 3\n'
        f'escalate_after = "3s"\nescalate_to = "{LEADS}"\n',
    )
    for _ in range(REPLICAS):
        start_bot(bot_factory, db_url=pg_url, KANDEV_SLACK_CONFIG=config)
    bundle = seed([db_question()], title="Chased by two replicas")
    card = wait_card(fake_slack, bundle.pending_id)

    fake_slack.wait_for(
        lambda: len(reminders(fake_slack, card.ts)) >= 3 and fake_slack.messages(LEADS),
        15 + MARGIN_S,
        "three reminders and the escalation",
    )
    fake_slack.settle(quiet=3, timeout=30)
    texts = [c.params["text"] for c in reminders(fake_slack, card.ts)]
    notices = [c for c in thread_replies(fake_slack, card.ts) if c.params["text"].startswith("🔺")]
    escalations = fake_slack.messages(LEADS)
    duplicates = max(len(texts) - 3, 0) + max(len(notices) - 1, 0) + max(len(escalations) - 1, 0)

    assert seed.server.answer(bundle.pending_id, {"db": "q1_opt1"}).status_code == 200
    wait_outcome(fake_slack, card.ts, "✅ Answered in Kandev: PostgreSQL")
    fake_slack.wait_for(
        lambda: "Answered in Kandev" in fake_slack.message(LEADS, escalations[0].ts).all_text,
        POLL_S + MARGIN_S,
        "the escalation card's outcome",
    )
    fake_slack.settle(quiet=2, timeout=30)
    edits = {
        (channel, ts): [
            c
            for c in fake_slack.calls("chat.update")
            if c.ok and c.params["channel"] == channel and c.params["ts"] == ts
        ]
        for channel, ts in ((CHANNEL, card.ts), (LEADS, escalations[0].ts))
    }
    duplicates += sum(max(len(e) - 1, 0) for e in edits.values())
    reliability.record(
        "2 replicas: 3 reminders, 1 escalation, 1 resolution", survived=True, duplicates=duplicates
    )
    assert texts == [f"{REMINDER} {n} s{NAMED}" for n in (2, 4, 6)]
    assert [c.params["text"] for c in notices] == [f"🔺 Escalated to <#{LEADS}>"]
    assert len(escalations) == 1
    assert {key: len(e) for key, e in edits.items()} == dict.fromkeys(edits, 1)
