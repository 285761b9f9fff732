"""Guarantee 3 with replicas: three bot processes on one PostgreSQL database share Slack's
per-channel posting rate (pacing goes through the database, not each process on its own), so a
burst of bundles that all of them claim is posted without a single 429; one replica SIGKILLed
mid-backlog loses and duplicates nothing, and the channel keeps its pace."""

from __future__ import annotations

import pytest

from tests.e2e.helpers import db_question, start_bot
from tests.e2e.reliability.support import duplicate_cards, missing_cards, rate_limited

REPLICAS = 3
BACKLOG = 24


@pytest.mark.postgres
@pytest.mark.fault(
    "3 replicas posting one backlog at 1 msg/s per channel, one SIGKILLed", guarantee=3
)
def test_replicas_share_the_channel_pace_and_survive_losing_one(
    pg_url,  # first: its schema is dropped only after the bots are stopped
    bot_factory,
    seed,
    fake_slack,
    reliability,
):
    fake_slack.faults.limit_post_message(per_second=1.0, burst=3)
    bots = [start_bot(bot_factory, db_url=pg_url, KANDEV_HINTS="off") for _ in range(REPLICAS)]
    # The bundles appear within seconds, far faster than one channel may be posted to: each
    # replica's sync claims some of them, so every replica has posts queued for the channel.
    bundles = seed.many(BACKLOG, [db_question()])

    def posted() -> int:
        return len([c for c in fake_slack.calls("chat.postMessage") if c.ok])

    fake_slack.wait_for(lambda: posted() >= BACKLOG // 3, 60, "a third of the backlog posted")
    bots[0].kill()
    fake_slack.wait_for(
        lambda: missing_cards(fake_slack, bundles) == 0,
        BACKLOG * 1.5 + 30,
        "a card for every bundle of the backlog",
    )
    fake_slack.settle(quiet=2, timeout=30)
    limited = rate_limited(fake_slack.calls("chat.postMessage"))
    dup = duplicate_cards(fake_slack, bundles)
    lost = missing_cards(fake_slack, bundles)
    posts = [c for c in fake_slack.calls("chat.postMessage") if c.ok]
    reliability.record(
        f"3 replicas, backlog of {BACKLOG} at 1 msg/s per channel, one SIGKILLed",
        guarantee=3,
        survived=not limited and dup == 0 and lost == 0,
        lost=lost,
        duplicates=dup,
        detail=f"{len(limited)} 429s",
    )
    assert (dup, lost) == (0, 0)
    assert limited == [], [(c.at, c.status) for c in limited]
    # The pace is Slack's: after the first burst, not faster than one a second.
    span = posts[-1].at - posts[0].at
    assert span >= (len(posts) - 3) * 0.9, span
    for bot in bots[1:]:
        code, body = bot.health()
        assert code == 200, body
