"""8. Replicas share Slack's rate: ``count`` bundles are waiting over the routed channels when
``replicas`` bot processes start on one PostgreSQL database (a fresh schema per run); one of
them is SIGKILLed once about half the cards are posted. Every card must be posted exactly once,
without a single 429 from the fake Slack, which enforces Slack's per-channel
``chat.postMessage`` limit (1 message/s, bursts of 3, 429 + Retry-After beyond): the replicas
pace their posts to a channel together, through the database.

Slack's limit alone, per channel of ``n`` cards: the first 3 at once, then one a second, so the
last goes ``n - 3`` seconds after the start. The bot posts at most one a second per channel (it
does not count on Slack's bursts), so at best its last card goes ``n - 1`` seconds after its
first. Times are from the moment the first replica was started.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg

from bench.cardlog import CardLog
from bench.kandev import DirectBundles, delete_tasks
from bench.scenarios.backlog import BURST, RATE_PER_CHANNEL, slack_floor_s
from bench.world import World
from tests.kit.harness import PG_ADMIN, BotProcess

AFTER_S = 7.0  # keep watching this long after the last card, for late duplicates
TARGET_RATIO = 1.1
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"


@dataclass(frozen=True)
class ReplicaRun:
    count: int
    channels: int
    replicas: int
    killed_after: int  # cards posted when one replica was SIGKILLed
    posted: int
    duplicates: int
    missing: int
    rate_limited: int
    first_s: float | None
    all_s: float | None
    slack_floor_s: float
    prepare_s: float

    @property
    def ratio(self) -> float | None:
        if self.all_s is None or not self.slack_floor_s:
            return None
        return self.all_s / self.slack_floor_s

    @property
    def met(self) -> bool:
        return (
            self.duplicates == 0
            and self.missing == 0
            and self.rate_limited == 0
            and self.ratio is not None
            and self.ratio <= TARGET_RATIO
        )


@contextmanager
def fresh_schema() -> Iterator[str]:
    """DATABASE_URL of a new, empty PostgreSQL schema, dropped afterwards."""
    schema = f"kandev_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield PG_URL.format(schema=schema)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def run(world: World, *, count: int, replicas: int = 3) -> ReplicaRun:
    direct = DirectBundles(world.kandev)
    started = time.monotonic()
    slots = direct.prepare(world.workspace_ids, count)
    try:
        asked = direct.ask_all(slots)
    except BaseException:  # their sessions hold a mock agent each: free them for what follows
        delete_tasks(world.kandev, [s.task_id for s in slots])
        raise
    ids = {a.pending_id for a in asked}
    prepare_s = time.monotonic() - started
    fake = world.fake_slack()
    fake.faults.limit_post_message(per_second=RATE_PER_CHANNEL, burst=BURST)
    log = CardLog(fake)
    channels = len(world.routes)
    timeout = 60.0 + 3.0 * math.ceil(count / channels)
    killed_after = 0
    try:
        with fresh_schema() as db_url:
            bots: list[BotProcess] = [
                world.bot(fake, f"replica-{n}", url=db_url) for n in range(replicas)
            ]
            try:
                start = time.time()
                for bot in bots:
                    bot.start(wait=False)
                for bot in bots:
                    bot.wait_ready(timeout=60)
                deadline = time.monotonic() + timeout
                while len(ids & set(log.posts)) < count // 2 and time.monotonic() < deadline:
                    log.pump(wait=0.2)
                killed_after = len(ids & set(log.posts))
                bots[0].kill()
                done = log.wait_posted(ids, timeout=max(deadline - time.monotonic(), 1.0))
                time.sleep(AFTER_S)
                log.pump()
            finally:
                for bot in bots:
                    bot.stop()
    finally:
        delete_tasks(world.kandev, [s.task_id for s in slots])
    posts = [call.at for pid, call in log.posts.items() if pid in ids]
    return ReplicaRun(
        count=count,
        channels=channels,
        replicas=replicas,
        killed_after=killed_after,
        posted=len(posts),
        duplicates=log.duplicates(),
        missing=len(ids - set(log.posts)),
        rate_limited=log.rate_limited,
        first_s=min(posts) - start if posts else None,
        all_s=max(posts) - start if posts and done else None,
        slack_floor_s=slack_floor_s(count, channels),
        prepare_s=prepare_s,
    )
