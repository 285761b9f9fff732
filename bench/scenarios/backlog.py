"""5. Backlog: ``count`` bundles are waiting when the bot starts → every one is posted exactly
once; how long that takes, and the bot's peak memory.

The fake Slack enforces Slack's per-channel ``chat.postMessage`` limit (1 message/s, bursts of
3, 429 + Retry-After beyond). At 1/s per channel one channel needs ``count`` seconds, so the
bundles are spread round-robin over the routed channels (10 by default): the time Slack's limit
alone imposes is about ``count / channels`` seconds. The bundles are agentless (nobody answers
them) and stay until Kandev is stopped at the end of the run.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from bench.cardlog import CardLog
from bench.kandev import DirectBundles, delete_tasks
from bench.procstat import peak_rss_mb, rss_mb
from bench.world import World

RATE_PER_CHANNEL = 1.0
BURST = 3


def slack_floor_s(count: int, channels: int) -> float:
    """Seconds Slack's limit alone needs for the busiest channel's cards (bursts of 3)."""
    per_channel = math.ceil(count / channels)
    return max(per_channel - BURST, 0) / RATE_PER_CHANNEL


AFTER_S = 7.0  # keep watching this long after the last card, for late duplicates


@dataclass(frozen=True)
class Backlog:
    count: int
    channels: int
    listed: int
    posted: int
    duplicates: int
    missing: int
    rate_limited: int
    first_s: float | None
    all_s: float | None
    slack_floor_s: float
    prepare_s: float
    rss_mb: float
    peak_rss_mb: float


def run(world: World, *, count: int) -> Backlog:
    kandev = world.kandev
    direct = DirectBundles(kandev)
    started = time.monotonic()
    asked = direct.ask_all(direct.prepare(world.workspace_ids, count))
    ids = {a.pending_id for a in asked}
    listed = sum(1 for b in kandev.list_pending() if b["pending_id"] in ids)
    prepare_s = time.monotonic() - started
    fake = world.fake_slack()
    fake.faults.limit_post_message(per_second=RATE_PER_CHANNEL, burst=BURST)
    bot = world.bot(fake, "backlog")
    log = CardLog(fake)
    channels = len(world.routes)
    per_channel = math.ceil(count / channels)
    timeout = 60.0 + 3.0 * per_channel
    try:
        start = time.time()
        bot.start()
        done = log.wait_posted(ids, timeout=timeout)
        time.sleep(AFTER_S)
        log.pump()
        assert bot.proc is not None
        rss, peak = rss_mb(bot.proc.pid), peak_rss_mb(bot.proc.pid)
    finally:
        bot.stop()
        # Their sessions hold a mock agent each (~10 MB): the scenarios after need the room.
        delete_tasks(kandev, [a.task_id for a in asked])
    posts = [call.at for pid, call in log.posts.items() if pid in ids]
    return Backlog(
        count=count,
        channels=channels,
        listed=listed,
        posted=len(posts),
        duplicates=log.duplicates(),
        missing=len(ids - set(log.posts)),
        rate_limited=log.rate_limited,
        first_s=min(posts) - start if posts else None,
        all_s=max(posts) - start if posts and done else None,
        slack_floor_s=slack_floor_s(count, channels),
        prepare_s=prepare_s,
        rss_mb=rss,
        peak_rss_mb=peak,
    )
