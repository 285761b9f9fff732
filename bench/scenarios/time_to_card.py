"""1. Time to card: bundle created in Kandev → its ``chat.postMessage`` reached the fake Slack.

The same bundles are watched by three observers at once, so they share every condition: the
floor (a bare WebSocket client), the bot with push hints, and a second bot with
``KANDEV_HINTS=off`` (polling only, every 5 s). Each bot has its own fake Slack and SQLite file.
Bundles are created one at a time, ``spacing`` apart (±25 %), round-robin over the channels, so
that no channel receives two within one poll interval (the bot paces posts to ~1/s per channel,
which would otherwise be measured instead of discovery).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from bench.cardlog import CardLog
from bench.floor import FloorClient
from bench.kandev import DirectBundles, delete_tasks
from bench.stats import Summary
from bench.world import World, wait_synced

SETTLE_S = 2.0  # after preparing the sessions, before the measured part


@dataclass(frozen=True)
class TimeToCard:
    count: int
    spacing_s: float
    floor: Summary | None
    push: Summary | None
    poll: Summary | None
    missing: dict[str, int]


def run(world: World, *, count: int, spacing: float, seed: int = 6) -> TimeToCard:
    kandev = world.kandev
    direct = DirectBundles(kandev)
    slots = direct.prepare(world.workspace_ids, count)
    floor = FloorClient(kandev.base_url, kandev.token).start()
    fake_push, fake_poll = world.fake_slack(), world.fake_slack()
    push = world.bot(fake_push, "ttc-push")
    poll = world.bot(fake_poll, "ttc-poll", KANDEV_HINTS="off")
    try:
        push.start()
        poll.start()
        wait_synced(push)
        wait_synced(poll)
        time.sleep(SETTLE_S)
        pushed, polled = CardLog(fake_push), CardLog(fake_poll)
        rng = random.Random(seed)
        asked = []
        for slot in slots:
            asked.append(direct.ask(slot))
            time.sleep(spacing * rng.uniform(0.75, 1.25))
        ids = [a.pending_id for a in asked]
        interval = float(poll.env["KANDEV_POLL_INTERVAL"])
        pushed.wait_posted(ids, timeout=30.0)
        polled.wait_posted(ids, timeout=interval + 30.0)
        time.sleep(0.5)  # late floor notifications, if any
    finally:
        push.stop()
        poll.stop()
        floor.stop()
        delete_tasks(kandev, [s.task_id for s in slots])

    def delays(arrival) -> list[float]:
        return [at - a.sent_at for a in asked if (at := arrival(a.pending_id)) is not None]

    def posted_at(log: CardLog):
        return lambda pending_id: log.posts[pending_id].at if pending_id in log.posts else None

    floor_s = delays(floor.arrival)
    push_s = delays(posted_at(pushed))
    poll_s = delays(posted_at(polled))
    return TimeToCard(
        count=count,
        spacing_s=spacing,
        floor=Summary.of_seconds(floor_s),
        push=Summary.of_seconds(push_s),
        poll=Summary.of_seconds(poll_s),
        missing={
            "floor": count - len(floor_s),
            "push": count - len(push_s),
            "poll": count - len(poll_s),
        },
    )
