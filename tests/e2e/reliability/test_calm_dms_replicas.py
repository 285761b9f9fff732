"""Calm DMs on two replicas sharing PostgreSQL (issue 33): more than three DM cards for one
person within a minute arrive as three DM cards, ONE gathering DM and the rest in its thread —
each card exactly once — whichever replica decides or posts each of them (the decision is one
transaction per card, serialised per person by an advisory lock; the posts go through the
fenced outbox).

Then the hard case: a replica frozen (SIGSTOP) while its post of the gathering DM is in flight
(the fake Slack holds the call, then carries it out). Its lease runs out and the other replica
posts the gathering DM and the cards in its thread; when the frozen one wakes (SIGCONT) it
reads Slack's answer to its own post, finds another gathering DM recorded and deletes its own:
one gathering DM stays, and every card is in its thread once.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter

import psycopg
import pytest

from kandev_slack.kits.fakeslack import BOB, FakeSlack, PostedMessage, ScriptedResponse
from tests.e2e.helpers import MARGIN_S, POLL_S, distinct_question, start_bot, wait_card
from tests.e2e.reliability.support import wait_until
from tests.e2e.test_snooze import subscribe
from tests.kit.harness import SeededBundle
from tests.kit.polling import eventually

GATHERING = "🧵 "
#: How long the fake Slack holds the frozen replica's post of the gathering DM before carrying
#: it out: past that replica's outbox lease (10 s) and the other's post of it.
HELD_S = 15.0


def dm_cards(fake: FakeSlack, dm: str) -> Counter[str]:
    """How many DM cards of each bundle the DM shows (its messages naming a bundle)."""
    return Counter(
        str(((m.metadata or {}).get("event_payload") or {}).get("pending_id"))
        for m in fake.messages(dm)
        if m.metadata
    )


def gatherings(fake: FakeSlack, dm: str) -> list[PostedMessage]:
    return [m for m in fake.messages(dm) if m.text.startswith(GATHERING) and not m.metadata]


def in_thread(fake: FakeSlack, dm: str, ts: str) -> list[str]:
    """The bundles whose DM cards are in the thread of ``ts``."""
    return [
        str(((m.metadata or {}).get("event_payload") or {}).get("pending_id"))
        for m in fake.messages(dm)
        if m.thread_ts == ts and m.metadata
    ]


def alone(fake: FakeSlack, dm: str) -> list[str]:
    """The bundles whose DM cards came on their own."""
    return [
        str(((m.metadata or {}).get("event_payload") or {}).get("pending_id"))
        for m in fake.messages(dm)
        if m.thread_ts is None and m.metadata
    ]


def assert_calm(
    fake: FakeSlack, dm: str, bundles: list[SeededBundle], header: str
) -> PostedMessage:
    """The first three bundles' DM cards came alone, the rest are in ONE gathering DM's thread
    (whose header reads ``header``), each exactly once; nothing else is in the DM."""
    [gathering] = gatherings(fake, dm)
    ids = [b.pending_id for b in bundles]
    assert alone(fake, dm) == ids[:3]
    assert sorted(in_thread(fake, dm, gathering.ts)) == sorted(ids[3:])
    assert dm_cards(fake, dm) == Counter(ids)  # each card exactly once
    assert len(fake.messages(dm)) == len(ids) + 1
    fake.wait_for(
        lambda: fake.message(dm, gathering.ts).text == header,
        10,
        f"the gathering's count, edited as cards joined: {header!r}",
    )
    return gathering


@pytest.mark.postgres
@pytest.mark.fault("two replicas gathering one person's burst of DM cards", guarantee=5)
def test_two_replicas_gather_a_burst_once(
    pg_url,  # first: its schema is dropped only after the bots are stopped
    bot_factory,
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    bots = [start_bot(bot_factory, db_url=pg_url) for _ in range(2)]
    subscribe(slack_driver(bots[0].events_url))
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    bundles = [
        seed([distinct_question(n)], title=f"Agent {n}", priority="critical" if n in (4, 6) else "")
        for n in range(7)
    ]
    for bundle in bundles:
        wait_card(fake_slack, bundle.pending_id, timeout=POLL_S + MARGIN_S + 10)
    fake_slack.wait_for(
        lambda: len(fake_slack.messages(dm)) >= 8, POLL_S * 7 + 15 + MARGIN_S, "8 DM messages"
    )
    fake_slack.settle(quiet=2, timeout=30)
    shown = dm_cards(fake_slack, dm)
    reliability.record(
        "2 replicas: a burst of 7 DM cards, 1 gathering DM",
        survived=len(gatherings(fake_slack, dm)) == 1,
        lost=sum(1 for b in bundles if not shown[b.pending_id]),
        duplicates=sum(max(n - 1, 0) for n in shown.values())
        + max(len(gatherings(fake_slack, dm)) - 1, 0),
    )
    assert_calm(fake_slack, dm, bundles, "🧵 7 agents need you — 2 critical")


def _gather_posting(pg_url: str) -> bool:
    """Whether a replica noted the gathering DM's post as under way (just before its call)."""
    dsn = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT last_error FROM outbox WHERE dedupe_key LIKE 'post:gather:%%'"
        ).fetchone()
    return row is not None and row[0] == "posting"


@pytest.mark.postgres
@pytest.mark.fault(
    "replica frozen (SIGSTOP) past its lease mid-post of a gathering DM", guarantee=5
)
def test_a_replica_frozen_mid_gathering_leaves_one_gathering_dm(
    pg_url,  # first: its schema is dropped only after the bots are stopped
    bot_factory,
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    frozen = start_bot(bot_factory, db_url=pg_url, KANDEV_HINTS="off")
    subscribe(slack_driver(frozen.events_url))
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    first = [seed([distinct_question(n)], title=f"Calm {n}") for n in range(3)]
    fake_slack.wait_for(
        lambda: len(alone(fake_slack, dm)) == 3, POLL_S * 3 + 10 + MARGIN_S, "3 DM cards alone"
    )
    # The fourth opens the gathering DM: its channel card goes through, the gathering's post
    # (the next chat.postMessage) is held by Slack while its replica is frozen.
    fake_slack.faults.script("chat.postMessage", ScriptedResponse())
    fake_slack.faults.script("chat.postMessage", ScriptedResponse(delay=HELD_S))
    fourth = seed([distinct_question(3)], title="Calm 3")
    wait_until(lambda: _gather_posting(pg_url), POLL_S + MARGIN_S + 10, "the gathering's post")
    time.sleep(0.5)
    os.kill(frozen.proc.pid, signal.SIGSTOP)
    try:
        other = start_bot(bot_factory, db_url=pg_url, KANDEV_HINTS="off")
        # Two more join the open gathering, decided by the replica still running.
        later = [seed([distinct_question(n)], title=f"Calm {n}") for n in (4, 5)]
        # The running replica posts the gathering DM once the frozen one's lease ran out, and
        # Slack then carries out the frozen one's held post too.
        eventually(
            lambda: len(gatherings(fake_slack, dm)) >= 2 or None,
            timeout=HELD_S + 15 + MARGIN_S,
        )
        time.sleep(2.0)  # Slack's answer reaches the frozen replica's socket
    finally:
        os.kill(frozen.proc.pid, signal.SIGCONT)
    bundles = [*first, fourth, *later]

    def settled() -> bool:
        return len(gatherings(fake_slack, dm)) == 1 and len(alone(fake_slack, dm)) == 3

    survived = True
    try:
        wait_until(settled, 20, "one gathering DM left")
        fake_slack.wait_for(
            lambda: len(fake_slack.messages(dm)) >= 7, 20, "every card in the gathering's thread"
        )
        fake_slack.settle(quiet=2, timeout=30)
    except (AssertionError, TimeoutError):
        survived = False
    shown = dm_cards(fake_slack, dm)
    reliability.record(
        "replica frozen past its lease mid-post of a gathering DM, the other posts, it wakes",
        survived=survived,
        lost=sum(1 for b in bundles if not shown[b.pending_id]),
        duplicates=sum(max(n - 1, 0) for n in shown.values())
        + max(len(gatherings(fake_slack, dm)) - 1, 0),
    )
    assert survived, (fake_slack.messages(dm), frozen.logs()[-3000:])
    gathering = assert_calm(fake_slack, dm, bundles, "🧵 6 agents need you")
    # Both replicas' posts reached Slack; the one not recorded was deleted by its replica.
    posted = [
        str(c.response["ts"])
        for c in fake_slack.calls("chat.postMessage")
        if c.ok and c.params.get("channel") == dm and str(c.params.get("text")).startswith("🧵")
    ]
    assert len(posted) == 2 and gathering.ts in posted, posted
    deleted = [c.params.get("ts") for c in fake_slack.calls("chat.delete") if c.ok]
    assert deleted == [ts for ts in posted if ts != gathering.ts]
    for bot in (frozen, other):
        code, body = bot.health()
        assert code == 200, body
