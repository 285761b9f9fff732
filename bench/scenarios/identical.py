"""14. The channel with N identical questions (issue 33): N agents ask the same question at
once in one routed channel; one channel card, the others posted in its thread. Measured: the
messages posted to the channel (top-level vs in a thread), the edits, each bundle's time to
card and the time from the burst to the last card — beside the floor measured in the same run,
same bot, same channel: N *different* questions asked at once (one channel card each).

Agentless bundles (bench/kandev.py ``DirectBundles``: the creation instant is known), all in
the first bench workspace (one channel); the floor's burst first, the identical burst once the
floor's cards are all posted. The bot paces posts per channel (~1/s, a thread post is a post
of its channel too), so both bursts are paced alike: what differs is what lands where.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from bench.cardlog import CardLog
from bench.kandev import Asked, DirectBundles, delete_tasks
from bench.stats import Summary
from bench.world import World, wait_synced
from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.kits.kandevkit import question

SETTLE_S = 2.0
#: Until every card of a burst is posted (the bot posts ~1 per second per channel).
POSTED_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Burst:
    """What one burst of ``count`` questions made in the channel."""

    count: int
    posted: int  # bundles with a card
    top_level: int  # chat.postMessage in the channel itself
    in_thread: int  # chat.postMessage with a thread_ts
    edits: int  # chat.update in the channel
    to_card: Summary | None  # each bundle: asked → its card posted
    to_last_card_s: float | None  # the burst's first request → its last card posted


@dataclass(frozen=True)
class IdenticalBench:
    count: int
    floor: Burst  # N different questions
    identical: Burst  # N identical questions


def _different(n: int) -> list:
    return [
        question(
            "q1",
            f"Question {n}",
            f"Which option for part {n} of the benchmark?",
            ("Alpha", f"The first way for part {n}"),
            ("Beta", f"The second way for part {n}"),
        )
    ]


_SAME = [
    question(
        "q1",
        "Database",
        "Which database should we use?",
        ("PostgreSQL", "Relational, strong consistency"),
        ("MongoDB", "Document store"),
    )
]


def run(world: World, *, count: int) -> IdenticalBench:
    kandev = world.kandev
    direct = DirectBundles(kandev)
    workspace = world.routes[0]
    slots = direct.prepare([workspace.workspace_id], 2 * count)
    fake = world.fake_slack()
    bot = world.bot(fake, "identical")
    try:
        bot.start()
        wait_synced(bot)
        time.sleep(SETTLE_S)
        floor = _burst(
            fake, workspace.channel, direct, slots[:count], [_different(n) for n in range(count)]
        )
        same = _burst(fake, workspace.channel, direct, slots[count:], [_SAME] * count)
    finally:
        bot.stop()
        delete_tasks(kandev, [s.task_id for s in slots])
    return IdenticalBench(count=count, floor=floor, identical=same)


def _burst(fake: FakeSlack, channel: str, direct: DirectBundles, slots, questions) -> Burst:
    log = CardLog(fake)
    start = fake.mark()
    asked: list[Asked] = [
        direct.ask(slot, qs, context=f"Agent {n} asks.")
        for n, (slot, qs) in enumerate(zip(slots, questions, strict=True))
    ]
    ids = [a.pending_id for a in asked]
    log.wait_posted(ids, timeout=POSTED_TIMEOUT_S)
    with contextlib.suppress(TimeoutError):  # the first card's line edits, if any
        fake.settle(quiet=1.0, timeout=30)
    calls = [c for c in fake.calls()[start:] if c.ok and c.params.get("channel") == channel]
    posts = [c for c in calls if c.method == "chat.postMessage"]
    in_thread = sum(1 for c in posts if c.params.get("thread_ts"))
    delays = [log.posts[a.pending_id].at - a.sent_at for a in asked if a.pending_id in log.posts]
    last = max((log.posts[p].at for p in ids if p in log.posts), default=None)
    return Burst(
        count=len(asked),
        posted=sum(1 for p in ids if p in log.posts),
        top_level=len(posts) - in_thread,
        in_thread=in_thread,
        edits=sum(1 for c in calls if c.method == "chat.update"),
        to_card=Summary.of_seconds(delays),
        to_last_card_s=None if last is None else last - asked[0].sent_at,
    )
