"""Two replicas on one PostgreSQL database: what waited for quiet hours arrives as ONE summary
(the release is one claim in the store, its post one outbox row), and a critical item's
reminder goes through once."""

from __future__ import annotations

import time

import pytest

from tests.e2e.helpers import MARGIN_S, start_bot, wait_card
from tests.e2e.test_quiet import FIRE, QUIET_S, REMINDER, SUMMARY, posts, quiet_for, routing_file
from tests.kit.harness import CHANNEL, question

REPLICAS = 2


def _distinct(n: int):
    return question(
        f"q{n}", f"Choice {n}", f"Pick option set {n}?", ("A", "First"), ("B", "Second")
    )


@pytest.mark.postgres
@pytest.mark.fault("two replicas racing to release one quiet-hours summary", guarantee=5)
def test_one_summary_with_two_replicas(
    pg_url,  # first: its schema is dropped only after the bots are stopped
    bot_factory,
    seed,
    fake_slack,
    reliability,
    tmp_path,
):
    config = routing_file(
        tmp_path, f'remind_after = "1s"\nquiet_hours = "{quiet_for(QUIET_S)}"\nquiet_tz = "UTC"\n'
    )
    for _ in range(REPLICAS):
        start_bot(bot_factory, db_url=pg_url, KANDEV_SLACK_CONFIG=config, QUIET_CHECK_S="0.1")
    # Distinct questions: an identical one would be posted in the first card's thread (and its
    # reminder there too).
    held = [seed([_distinct(n)], title=f"Held {n}") for n in range(3)]
    fire = seed([FIRE], title="On fire", priority="critical")
    cards = [wait_card(fake_slack, bundle.pending_id) for bundle in held]
    hot = wait_card(fake_slack, fire.pending_id)

    summary = fake_slack.wait_for(
        lambda: next(iter(posts(fake_slack, CHANNEL, SUMMARY)), None),
        QUIET_S + 15 + MARGIN_S,
        "the summary once the quiet hours end",
    )
    time.sleep(2)
    fake_slack.settle(quiet=2, timeout=30)
    summaries = posts(fake_slack, CHANNEL, SUMMARY)
    reminders = posts(fake_slack, CHANNEL, REMINDER)
    held_reminders = [c for c in reminders if c.params.get("thread_ts") in {c.ts for c in cards}]
    hot_reminders = [c for c in reminders if c.params.get("thread_ts") == hot.ts]
    duplicates = max(len(summaries) - 1, 0) + max(len(hot_reminders) - 1, 0)
    reliability.record(
        "2 replicas: 1 quiet-hours summary, 1 critical reminder",
        survived=True,
        duplicates=duplicates,
    )
    assert summary.params["text"] == f"{SUMMARY} 4 items wait — 1 critical"
    assert len(summaries) == 1
    assert held_reminders == []
    assert len(hot_reminders) == 1
