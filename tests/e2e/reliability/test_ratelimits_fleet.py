"""Guarantee 3 on the paths of issue 33 (supervising a fleet): Slack answering 429 +
Retry-After to the digest DM, the quiet-hours summary, the calm-DM gathering DM and the cards in
its thread, and the identical items' cards in the first card's thread. Each is delivered exactly
once after the limit lifts — nothing lost, nothing posted twice — and each retry comes no earlier
than the Retry-After of the 429 before it (checked on the fake's call times)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from contextlib import closing
from dataclasses import replace

from kandev_slack.kits.fakeslack import ALICE, BOB, CallRecord, FakeSlack
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    card_posts,
    db_question,
    distinct_question,
    slash_reply,
    start_bot,
    wait_card,
)
from tests.e2e.reliability.support import rate_limited
from tests.e2e.test_answer_all import assert_in_thread, wait_group
from tests.e2e.test_calm_dms import GATHERING
from tests.e2e.test_digest import digests_in, say, wait_digest
from tests.e2e.test_identical_threads import channel_cards
from tests.e2e.test_quiet import SUMMARY, posts, quiet_for
from tests.e2e.test_snooze import subscribe
from tests.kit.harness import CHANNEL

#: Retry-After of the 429s here (seconds, as Slack sends it: whole seconds).
RETRY_AFTER = 1
#: How much earlier than Retry-After a retry may be recorded (clock granularity only).
EPSILON_S = 0.05


def calls_in(fake: FakeSlack, method: str, channel: str) -> list[CallRecord]:
    return [c for c in fake.calls(method) if c.params.get("channel") == channel]


def assert_honoured(calls: list[CallRecord], retry_after: float = RETRY_AFTER) -> None:
    """Each call after a 429 of the same message came no earlier than its Retry-After."""
    for before, after in zip(calls, calls[1:], strict=False):
        if before.status == 429:
            assert after.at - before.at >= retry_after - EPSILON_S, (before.at, after.at)


def dm_cards(fake: FakeSlack, dm: str) -> Counter[str]:
    """How many DM cards of each bundle the DM shows."""
    return Counter(
        str(((m.metadata or {}).get("event_payload") or {}).get("pending_id"))
        for m in fake.messages(dm)
        if m.metadata
    )


def test_a_rate_limited_digest_dm_comes_once(
    app_factory, seed, fake_slack, slack_driver, reliability
):
    bot = start_bot(app_factory)
    driver = slack_driver(bot.events_url)
    dm = fake_slack.ctx.resolve_channel(ALICE.id)
    bundle = seed([distinct_question(1)], title="Digest under a rate limit")
    wait_card(fake_slack, bundle.pending_id)
    fake_slack.faults.rate_limit("conversations.open", RETRY_AFTER, times=1)  # its DM's id
    fake_slack.faults.rate_limit("chat.postMessage", RETRY_AFTER, times=3, channel=dm)

    assert "on its way: 1 question for you" in say(driver, "digest now")
    digest = wait_digest(fake_slack, dm, 3 * RETRY_AFTER + 5 + MARGIN_S)
    assert "Digest under a rate limit" in digest.text
    fake_slack.settle(quiet=1.5, timeout=20)
    tries = calls_in(fake_slack, "chat.postMessage", dm)
    assert [c.status for c in tries] == [429, 429, 429, 200]
    assert_honoured(tries)
    opened = fake_slack.calls("conversations.open")
    assert [c.status for c in opened][:2] == [429, 200]
    assert tries[0].at - opened[0].at >= RETRY_AFTER - EPSILON_S
    sent = digests_in(fake_slack, dm)
    reliability.record(
        "429 Retry-After on the digest DM",
        guarantee=3,
        survived=True,
        lost=0 if sent else 1,
        duplicates=max(len(sent) - 1, 0),
    )
    assert len(sent) == 1


def test_a_rate_limited_quiet_hours_summary_comes_once(
    app_factory, seed, fake_slack, slack_driver, reliability
):
    fake_slack.add_user(replace(BOB, tz="UTC"))
    bot = start_bot(app_factory, QUIET_CHECK_S="0.2")
    driver = slack_driver(bot.events_url)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    subscribe(driver)
    hours = quiet_for(3 * 3600)
    ack = driver.slash("/kandev-questions", f"quiet {hours}", user=BOB, channel=BOB.id)
    assert ack.status == 200
    held = [seed([distinct_question(n)], title=f"Held {n}") for n in (1, 2)]
    for bundle in held:
        wait_card(fake_slack, bundle.pending_id)
    fake_slack.wait_for(lambda: _held_count(bot) >= 2, POLL_S + 10, "both DM cards held")
    assert fake_slack.messages(dm) == []
    fake_slack.faults.rate_limit("chat.postMessage", RETRY_AFTER, times=2, channel=dm)
    # …and, when the post would go through, the link to one of its cards: the summary waits
    # for it rather than going without (each try reads the links of its 2 cards first).
    fake_slack.faults.allow("chat.getPermalink", times=4)
    fake_slack.faults.rate_limit("chat.getPermalink", RETRY_AFTER, times=1)

    # the reply: the ack's body, or (a loaded machine) an ephemeral message after it
    slash_reply(driver, "quiet off", "Quiet hours removed", user=BOB)
    fake_slack.wait_for(
        lambda: posts(fake_slack, dm, SUMMARY), 2 * RETRY_AFTER + 10 + MARGIN_S, "the summary"
    )
    fake_slack.settle(quiet=1.5, timeout=20)
    summaries = posts(fake_slack, dm, SUMMARY)
    tries = calls_in(fake_slack, "chat.postMessage", dm)
    assert [c.status for c in tries] == [429, 429, 200]
    assert_honoured(tries)
    reliability.record(
        "429 Retry-After on the quiet-hours summary",
        guarantee=3,
        survived=True,
        lost=0 if summaries else 1,
        duplicates=max(len(summaries) - 1, 0),
    )
    assert len(summaries) == 1
    assert summaries[0].params["text"] == f"{SUMMARY} 2 items wait"
    links = str(summaries[0].params["blocks"])
    assert links.count("https://") == 2, links  # each item links to its card
    assert len(fake_slack.messages(dm)) == 1  # the summary only: the held DM cards are in it


def _held_count(bot) -> int:
    """How many DM cards wait for Bob's quiet hours (in the bot's SQLite file)."""
    path = str(bot.env["DATABASE_URL"]).removeprefix("sqlite:///")
    with closing(sqlite3.connect(path)) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM held_items WHERE target = ? AND released_at IS NULL",
            (BOB.id,),
        ).fetchone()
    return int(count)


def test_a_rate_limited_gathering_dm_and_its_cards_come_once(
    app_factory, seed, fake_slack, slack_driver, reliability
):
    bot = start_bot(app_factory)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    subscribe(slack_driver(bot.events_url))
    first = [seed([distinct_question(n)], title=f"Burst {n}") for n in range(3)]
    fake_slack.wait_for(
        lambda: len(fake_slack.messages(dm)) == 3, POLL_S * 3 + 10 + MARGIN_S, "3 DM cards"
    )
    # The next DM posts: the gathering DM refused twice, then posted; the first card in its
    # thread refused once.
    faults = fake_slack.faults
    faults.rate_limit("chat.postMessage", RETRY_AFTER, times=2, channel=dm)
    faults.allow("chat.postMessage", channel=dm)
    faults.rate_limit("chat.postMessage", RETRY_AFTER, times=1, channel=dm)
    then = [seed([distinct_question(n)], title=f"Burst {n}") for n in (3, 4)]
    gathering = fake_slack.wait_for(
        lambda: next((m for m in fake_slack.messages(dm) if m.text.startswith(GATHERING)), None),
        POLL_S * 2 + 3 * RETRY_AFTER + 10 + MARGIN_S,
        "the gathering DM",
    )
    # One more joins once it is posted: the edit of its count is refused once, and so is the
    # card's post in its thread.
    faults.rate_limit("chat.update", RETRY_AFTER, times=1, channel=dm)
    faults.rate_limit("chat.postMessage", RETRY_AFTER, times=1, channel=dm)
    last = seed([distinct_question(5)], title="Burst 5")
    bundles = [*first, *then, last]

    fake_slack.wait_for(
        lambda: len(fake_slack.messages(dm)) >= 7,
        POLL_S + 2 * RETRY_AFTER + 10 + MARGIN_S,
        "3 cards in the gathering's thread",
    )
    fake_slack.wait_for(
        lambda: fake_slack.message(dm, gathering.ts).text == "🧵 6 agents need you",
        RETRY_AFTER + 10,
        "the gathering's count, edited after its 429",
    )
    fake_slack.settle(quiet=2, timeout=30)
    threaded = [m for m in fake_slack.messages(dm) if m.thread_ts == gathering.ts]
    shown = dm_cards(fake_slack, dm)
    tries = calls_in(fake_slack, "chat.postMessage", dm)
    edits = calls_in(fake_slack, "chat.update", dm)
    reliability.record(
        "429 Retry-After on a gathering DM, its count and its cards",
        guarantee=3,
        survived=True,
        lost=sum(1 for b in bundles if not shown[b.pending_id]),
        duplicates=sum(max(n - 1, 0) for n in shown.values())
        + max(len([m for m in fake_slack.messages(dm) if m.text.startswith(GATHERING)]) - 1, 0),
    )
    assert len(rate_limited(tries)) == 4 and len(rate_limited(edits)) == 1
    assert_honoured([c for c in tries if str(c.params.get("text")).startswith(GATHERING)])
    assert_honoured(edits)
    for bundle in bundles:
        assert_honoured([c for c in tries if _names(c, bundle.pending_id)])
    assert shown == Counter(b.pending_id for b in bundles)  # each card once
    assert len(threaded) == 3 and len(fake_slack.messages(dm)) == 7


def _names(call: CallRecord, pending_id: str) -> bool:
    """Whether ``call`` posted a card of ``pending_id`` (its metadata names it)."""
    payload = (call.params.get("metadata") or {}).get("event_payload") or {}
    return payload.get("pending_id") == pending_id


def test_rate_limited_cards_in_the_first_card_s_thread_come_once(
    app_factory, seed, fake_slack, reliability
):
    start_bot(app_factory)
    # The first card goes through; each card in its thread is refused once; the first
    # card's line counting them is refused once too.
    faults = fake_slack.faults
    faults.allow("chat.postMessage", channel=CHANNEL)
    faults.rate_limit("chat.postMessage", RETRY_AFTER, times=1, channel=CHANNEL)
    faults.allow("chat.postMessage", channel=CHANNEL)
    faults.rate_limit("chat.postMessage", RETRY_AFTER, times=1, channel=CHANNEL)
    faults.rate_limit("chat.update", RETRY_AFTER, times=1, channel=CHANNEL)
    bundles = [seed([db_question()], title=f"Limited agent {n}") for n in (1, 2, 3)]
    cards = [
        wait_card(fake_slack, b.pending_id, timeout=POLL_S + 3 * RETRY_AFTER + 10) for b in bundles
    ]
    first_ts = cards[0].ts
    wait_group(fake_slack, first_ts, "🧵 2 more agents asked this: <")
    fake_slack.settle(quiet=1.5, timeout=20)
    posted = {b.pending_id: len(card_posts(fake_slack, b.pending_id)) for b in bundles}
    tries = calls_in(fake_slack, "chat.postMessage", CHANNEL)
    reliability.record(
        "429 Retry-After on cards in the first card's thread",
        guarantee=3,
        survived=True,
        lost=sum(1 for n in posted.values() if n == 0),
        duplicates=sum(max(n - 1, 0) for n in posted.values()),
    )
    assert list(posted.values()) == [1, 1, 1]
    assert len(rate_limited(tries)) == 2
    assert len(rate_limited(calls_in(fake_slack, "chat.update", CHANNEL))) == 1
    for bundle in bundles:
        assert_honoured([c for c in tries if _names(c, bundle.pending_id)])
    assert channel_cards(fake_slack) == [first_ts]
    for card in cards[1:]:
        assert_in_thread(fake_slack, card.ts, first_ts)
