"""Guarantee 3: Slack rate limits and errors on chat.postMessage / chat.update lose nothing.

Every bundle gets exactly one card and every state change its edit, eventually; Retry-After is
honoured (checked on the fake's call timestamps); a backlog is posted paced per channel without
a storm of 429s, and an edit enqueued during the backlog is not starved by it.
"""

from __future__ import annotations

import time

import pytest

from kandev_slack.kits.fakeslack import ALICE
from tests.e2e.helpers import (
    POLL_S,
    card_posts,
    card_updates,
    db_question,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.support import (
    calls_for,
    duplicate_cards,
    missing_cards,
    rate_limited,
)
from tests.kit.harness import CHANNEL
from tests.kit.polling import eventually

#: How much earlier than Retry-After a retry may be recorded (clock granularity only).
EPSILON_S = 0.05


def _answer_by_click(driver, ts: str) -> None:
    ack = driver.click(CHANNEL, ts, text="MongoDB", user=ALICE)
    assert ack.status == 200


@pytest.mark.fault("429 Retry-After on post and update", guarantee=3)
def test_retry_after_is_honoured_for_posts_and_edits(
    app_factory,  # noqa: F811
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    bot = start_bot(app_factory)
    fake_slack.faults.rate_limit("chat.postMessage", retry_after=2, times=2)
    bundle = seed([db_question()], title="Rate limited post")

    card = wait_card(fake_slack, bundle.pending_id, timeout=POLL_S + 12)
    posts = calls_for(fake_slack, "chat.postMessage", bundle.pending_id)
    limited = rate_limited(posts)
    assert len(limited) == 2, [c.status for c in posts]
    # Each retry came no earlier than the Retry-After of the 429 before it.
    for before, after in zip(posts, posts[1:], strict=False):
        if before.status == 429:
            assert after.at - before.at >= 2.0 - EPSILON_S, (before.at, after.at)

    fake_slack.faults.rate_limit("chat.update", retry_after=3, times=1)
    _answer_by_click(slack_driver(bot.events_url), card.ts)
    assert wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")["status"] == (
        "answered"
    )
    wait_outcome(fake_slack, card.ts, "✅ Answered by", timeout=15)

    def both_edits() -> list:
        # The fake records a call once it has answered it: the edit it applied can be seen a
        # moment before its record (the bot runs in this process).
        found = [c for c in fake_slack.calls("chat.update") if c.params.get("ts") == card.ts]
        return found if len(found) >= 2 else []

    updates = eventually(both_edits, timeout=5)
    assert updates[0].status == 429
    assert updates[1].at - updates[0].at >= 3.0 - EPSILON_S
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1
    reliability.record(
        "429 Retry-After on post and update",
        guarantee=3,
        survived=True,
        lost=missing_cards(fake_slack, [bundle]) + (0 if card_updates(fake_slack, card.ts) else 1),
        duplicates=duplicate_cards(fake_slack, [bundle]),
    )


@pytest.mark.fault("5xx on post and update", guarantee=3)
def test_server_errors_are_retried_without_duplicates(
    app_factory,  # noqa: F811
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    bot = start_bot(app_factory)
    # More 5xx than the Web API client retries by itself: the outbox must take over.
    fake_slack.faults.server_error("chat.postMessage", 500, times=4)
    bundle = seed([db_question()], title="Server errors")
    card = wait_card(fake_slack, bundle.pending_id, timeout=POLL_S + 20)
    failed = [c for c in calls_for(fake_slack, "chat.postMessage") if c.status >= 500]
    assert len(failed) == 4

    fake_slack.faults.server_error("chat.update", 503, times=4)
    _answer_by_click(slack_driver(bot.events_url), card.ts)
    wait_outcome(fake_slack, card.ts, "✅ Answered by", timeout=25)
    assert len([c for c in fake_slack.calls("chat.update") if c.status == 503]) == 4
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1
    reliability.record(
        "5xx on post and update",
        guarantee=3,
        survived=True,
        lost=missing_cards(fake_slack, [bundle]),
        duplicates=duplicate_cards(fake_slack, [bundle]),
    )


BACKLOG = 40


@pytest.mark.fault("backlog against 1 msg/s per channel", guarantee=3)
def test_backlog_is_paced_and_does_not_starve_edits(
    app_factory,  # noqa: F811
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    # Bundles that piled up while the bot was down, and Slack's per-channel posting limit.
    bundles = seed.many(BACKLOG, [db_question()])
    fake_slack.faults.limit_post_message(per_second=1.0, burst=3)
    bot = start_bot(app_factory)
    driver = slack_driver(bot.events_url)

    first = fake_slack.wait_for(
        lambda: next((c for c in fake_slack.calls("chat.postMessage") if c.ok), None),
        timeout=20,
        description="the first card of the backlog",
    )
    ts = str(first.response["ts"])
    clicked_at = time.time()
    _answer_by_click(driver, ts)
    edited = wait_outcome(fake_slack, ts, "✅ Answered by", timeout=10)
    assert edited is not None
    # The fake applies an edit before it records the call: wait for the record too.
    edit = fake_slack.wait_for(
        lambda: next(iter(card_updates(fake_slack, ts)), None), 10, "the edit's chat.update"
    )

    # Mid-backlog, one post times out after reaching Slack: it must not be posted twice.
    fake_slack.wait_for(
        lambda: len([c for c in fake_slack.calls("chat.postMessage") if c.ok]) >= 8, timeout=30
    )
    fake_slack.faults.slow("chat.postMessage", 11.0, times=1)

    fake_slack.wait_for(
        lambda: missing_cards(fake_slack, bundles) == 0,
        timeout=BACKLOG * 1.5 + 30,
        description="a card for every bundle of the backlog",
    )
    fake_slack.settle(quiet=1.5, timeout=20)
    posts = [c for c in fake_slack.calls("chat.postMessage") if c.ok]
    limited = rate_limited(fake_slack.calls("chat.postMessage"))
    dup = duplicate_cards(fake_slack, bundles)
    lost = missing_cards(fake_slack, bundles)

    assert dup == 0 and lost == 0, (dup, lost)
    # The edit was not starved: done within seconds of the click, long before the backlog ended.
    assert edit.at - clicked_at < 5.0, edit.at - clicked_at
    assert edit.at < posts[-1].at - 10
    # Paced, not a 429 storm; and not much slower than Slack allows.
    assert len(limited) <= 2, [(c.at, c.status) for c in limited]
    span = posts[-1].at - posts[0].at
    assert span >= (len(posts) - 3) * 0.95, span  # at most ~1/s after the burst
    assert span <= len(posts) * 1.35 + 12, span  # the slow post costs its 10 s timeout
    reliability.record(
        f"backlog of {BACKLOG} against 1 msg/s per channel",
        guarantee=3,
        survived=True,
        lost=lost,
        duplicates=dup,
        detail=f"{len(limited)} 429s, posted over {span:.0f}s",
    )
