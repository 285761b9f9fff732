"""Two replicas on one PostgreSQL database (issue 22's rule: each new path works on replicas):
"I'm on it" clicked on both at once ends with one holder and its claim lapses once; a reply in
the thread offered by one replica is sent by a Send the other one receives, once."""

from __future__ import annotations

import threading

import pytest

from kandev_slack.kits.fakeslack import ALICE, BOB
from tests.e2e.helpers import (
    MARGIN_S,
    db_question,
    outcome_line,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.test_claims import CLAIM, claim_line, thread_texts, wait_claim
from tests.e2e.test_followups import routing_file
from tests.kit.harness import CHANNEL


@pytest.mark.postgres
def test_a_claim_raced_on_two_replicas_has_one_holder_and_lapses_once(
    pg_url, bot_factory, seed, fake_slack, slack_driver, tmp_path
):
    config = routing_file(tmp_path, 'claim_for = "4s"\n')
    bots = [start_bot(bot_factory, db_url=pg_url, KANDEV_SLACK_CONFIG=config) for _ in range(2)]
    bundle = seed([db_question()], title="Claimed on two replicas")
    card = wait_card(fake_slack, bundle.pending_id)
    drivers = [slack_driver(bot.events_url) for bot in bots]

    clicks = [
        threading.Thread(target=drivers[i].choose, args=(CHANNEL, card.ts), kwargs=kw)
        for i, kw in enumerate(({"text": CLAIM, "user": ALICE}, {"text": CLAIM, "user": BOB}))
    ]
    for click in clicks:
        click.start()
    for click in clicks:
        click.join(10)
    wait_ephemeral(fake_slack, ALICE.id, "👀 You")
    wait_ephemeral(fake_slack, BOB.id, "👀 You")
    fake_slack.settle(quiet=1.0, timeout=10)
    holder = claim_line(fake_slack.message(CHANNEL, card.ts))
    assert holder in (
        f"👀 <@{ALICE.id}> is on it (since <time>)",
        f"👀 <@{BOB.id}> is on it (since <time>)",
    )
    # The second became a take over of the first (one notice), never two holders.
    took = [t for t in thread_texts(fake_slack, card.ts) if "took this over" in t]
    assert len(took) == 1

    wait_claim(fake_slack, card.ts, None)
    fake_slack.settle(quiet=2.0, timeout=20)
    lapsed = [t for t in thread_texts(fake_slack, card.ts) if "claim ran out" in t]
    assert len(lapsed) == 1, lapsed


@pytest.mark.postgres
def test_a_thread_reply_offered_by_one_replica_is_sent_by_the_other_once(
    pg_url, bot_factory, seed, fake_slack, slack_driver
):
    bots = [start_bot(bot_factory, db_url=pg_url) for _ in range(2)]
    bundle = seed([db_question()], title="Replied on two replicas")
    card = wait_card(fake_slack, bundle.pending_id)
    first, second = (slack_driver(bot.events_url) for bot in bots)

    first.reply_in_thread(CHANNEL, card.ts, "mongodb", user=ALICE)
    prompt = wait_ephemeral(fake_slack, ALICE.id, "as your answer to *Database*?")
    assert prompt.thread_ts == card.ts
    assert second.click_ephemeral(prompt, text="Send").status == 200
    assert second.click_ephemeral(prompt, text="Send").status == 200  # a double click
    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered", timeout=15)
    assert final["status"] == "answered"
    edited = wait_outcome(fake_slack, card.ts, "✅", timeout=10 + MARGIN_S)
    assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: MongoDB"
    fake_slack.settle(quiet=1.0, timeout=10)
    edits = [c for c in fake_slack.calls("chat.update") if c.ok and c.params["ts"] == card.ts]
    assert len(edits) == 1
