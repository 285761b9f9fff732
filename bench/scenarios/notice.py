"""15. Noticing one new item among many waiting: the bot's CPU per new bundle at 10, 100 and
1,000 waiting (issue 35, point 2).

One world grows: ``levels`` waiting bundles (10 → 100 → 1,000 by default, agentless, as in the
big-queues scenario; the bundles of one level and its new ones wait at the next, so the
largest level's bundles are made once). They are the run's waiting pool (``World.waiting``):
they stay waiting for the footprint and the big queues, which run after, so that the run makes
~1,000 sessions once (Kandev's agentctl keeps ~9 MB per session it ran, even once its task is
deleted: two sets of 1,000 do not fit in the machine's memory beside the other scenarios').
At each level a fresh bot (push hints on, poll every 5 s, as in production) starts on a store
in which every waiting bundle's card is posted already (in its fake Slack, rendered by the
bot's own code); then, once the bot has run a minute (a bundle created within a minute of its
start may be one a lost database forgot: its channel's recent history is read first, a
restart's cost that is not noticing's, kandev_slack/usecases/outbox/forgotten.py):

- its CPU time (``/proc``, every thread) over ``cycles`` poll intervals while idle, before and
  after the new bundles (their mean is the idle rate: the regular poll, whose cost does grow
  with the queue, and the other workers' wake-ups);
- ``new`` new bundles are asked, ``spacing`` apart, round-robin over the channels, within a
  window of whole poll intervals; the CPU over that window less the idle rate over the same
  time, divided by ``new``, is what noticing and posting one new bundle cost the bot;
- beside it, the bot's Kandev requests per new bundle beyond the idle rate
  (``kandev_slack_kandev_requests_total``), and time to card (bundle created →
  ``chat.postMessage``) beside a bare WebSocket client's notification (the floor).

The target: the CPU per new item at the largest level within :data:`CPU_RATIO_TARGET` × the
one at the smallest.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.cardlog import CardLog
from bench.floor import FloorClient
from bench.kandev import Asked, DirectBundles, Slot
from bench.procstat import cpu_seconds, load_average
from bench.scenarios.kandev_requests import counts_delta, request_counts
from bench.stats import Summary
from bench.world import World, wait_synced
from kandev_slack.core.clarification import Bundle
from kandev_slack.core.domain import NewCard, TaskInfo
from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database
from kandev_slack.usecases.outbox.forgotten import MARGIN
from kandev_slack.usecases.outbox.messages import card_message
from tests.kit.harness import KandevHarnessError

#: The target: CPU per new item at the largest level ≤ this × the one at the smallest.
CPU_RATIO_TARGET = 1.5
LEVELS = (10, 100, 1000)
#: New bundles asked at each level. The idle rate subtracted is a mean, and a full read of
#: 1,000 waiting (~100 ms of CPU every poll interval) falls on either side of a window's edge:
#: with 10 new items that one read moved the result by ~10 ms per item (21 against 33 ms in
#: one run, for the same code); with 30 the same read moves it by a third of that.
NEW = 30
SETTLE_S = 3.0  # after the bot's first cycle, before anything is measured
#: New bundles are asked this long after the bot's start at the earliest (see _measure_level).
RESTART_MARGIN_S = MARGIN.total_seconds() + 2.0
LIST_CALL = "mcp list_pending_questions_kandev"
CONVERSATION_CALL = "mcp get_task_conversation_kandev"


@dataclass
class Level:
    waiting: int
    new: int
    window_s: float = 0.0
    #: The bot's CPU ms per second while idle (the mean of the windows before and after).
    idle_ms_per_s: float | None = None
    #: The bot's CPU ms per new bundle, beyond the idle rate.
    cpu_ms_per_item: float | None = None
    #: The bot's Kandev requests per new bundle beyond the idle rate: (list pages, conversation
    #: reads, other requests).
    requests_per_item: tuple[float, float, float] | None = None
    floor: Summary | None = None
    push: Summary | None = None
    missing: int = 0
    load: str = ""


@dataclass
class Notice:
    levels: list[Level] = field(default_factory=list)
    spacing_s: float = 0.6
    cycles: int = 2
    poll_interval_s: float = 5.0
    prepare_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def cpu_ratio(self) -> float | None:
        """CPU per new item at the largest level ÷ at the smallest."""
        measured = [lv for lv in self.levels if lv.cpu_ms_per_item is not None]
        if len(measured) < 2:
            return None
        low, high = measured[0].cpu_ms_per_item, measured[-1].cpu_ms_per_item
        assert low is not None and high is not None
        return high / low if low > 0 else None


def run(
    world: World,
    *,
    levels: Sequence[int] = LEVELS,
    new: int = NEW,
    spacing: float = 0.6,
    cycles: int = 2,
) -> Notice:
    result = Notice(spacing_s=spacing, cycles=cycles)
    pool = world.waiting
    routes = {r.workspace_id: r for r in world.routes}
    tasks: dict[str, TaskInfo] = {}

    def known(slots: Sequence[Slot]) -> list[Slot]:
        for slot in slots:
            tasks[slot.task_id] = TaskInfo(
                task_id=slot.task_id,
                title=slot.title,
                workspace_id=slot.workspace_id,
                workspace_name=routes[slot.workspace_id].workspace_name,
            )
        return list(slots)

    for size in sorted(levels):
        started = time.monotonic()
        try:
            waiting = pool.ask(size)
            known(pool.slots[: len(waiting)])
            newcomers = known(pool.prepare(len(waiting) + new)[len(waiting) :])
        except (KandevHarnessError, httpx.HTTPError) as exc:  # what was measured is kept
            result.problems.append(f"{size:,} waiting not made: {exc}"[:300])
            break
        result.prepare_s += time.monotonic() - started
        bundles = _listed(world, {a.pending_id for a in waiting}, tasks)
        level = Level(waiting=len(bundles), new=new)
        result.levels.append(level)
        try:
            asked = _measure_level(world, pool.direct, bundles, newcomers, level, result)
        except BaseException:
            pool.drop(newcomers)  # some may have asked: never asked again
            raise
        pool.adopt(asked)  # they wait at the next level, and for the footprint and queues
    return result


def _listed(
    world: World, ids: set[str], tasks: dict[str, TaskInfo]
) -> list[tuple[Bundle, TaskInfo]]:
    """The waiting bundles as Kandev lists them, with their tasks."""
    listed = [b for b in world.kandev.list_pending() if b["pending_id"] in ids]
    bundles = [Bundle.model_validate(b) for b in listed]
    return [(b, tasks[b.task_id]) for b in bundles]


def _measure_level(
    world: World,
    direct: DirectBundles,
    bundles: Sequence[tuple[Bundle, TaskInfo]],
    newcomers: Sequence[Slot],
    level: Level,
    result: Notice,
) -> list[Asked]:
    name = f"notice-{level.waiting}"
    fake = world.fake_slack()
    bot = world.bot(fake, name, db=filled_store(world, fake, name, bundles))
    interval = result.poll_interval_s = float(bot.env["KANDEV_POLL_INTERVAL"])
    # Whole poll intervals, so that each window holds as many full reads as the idle ones.
    needed = len(newcomers) * result.spacing_s * 1.25 + 2.0
    window = level.window_s = interval * max(result.cycles, math.ceil(needed / interval))
    floor = FloorClient(world.kandev.base_url, world.kandev.token).start()
    cards = CardLog(fake)
    asked: list[Asked] = []
    try:
        bot.start()
        began = time.monotonic()
        wait_synced(bot, timeout=120.0)
        time.sleep(SETTLE_S)
        assert bot.proc is not None
        pid, metrics = bot.proc.pid, bot.events_url.rsplit("/slack/", 1)[0] + "/metrics"
        idle_before = _window(pid, metrics, window)
        # A bundle created within a minute of the bot's start may be one a lost database
        # forgot: its channel is searched for its card first (a restart's cost, not noticing's).
        time.sleep(max(began + RESTART_MARGIN_S - time.monotonic(), 0.0))
        cards.pump()
        cpu0, requests0, t0 = cpu_seconds(pid), request_counts(metrics), time.monotonic()
        asked = _ask_spaced(direct, newcomers, result.spacing_s)
        ids = [a.pending_id for a in asked]
        if not cards.wait_posted(ids, timeout=max(window - (time.monotonic() - t0), 0.0) + 30.0):
            result.problems.append(f"{level.waiting} waiting: not every new bundle was posted")
        time.sleep(max(t0 + window - time.monotonic(), 0.0))
        cpu1, requests1, t1 = cpu_seconds(pid), request_counts(metrics), time.monotonic()
        idle_after = _window(pid, metrics, window)
        level.load = load_average()
    finally:
        bot.stop()
        floor.stop()
    idle_cpu = (idle_before[0] + idle_after[0]) / 2  # CPU s per s
    idle_requests = {
        k: (idle_before[1].get(k, 0.0) + idle_after[1].get(k, 0.0)) / 2
        for k in set(idle_before[1]) | set(idle_after[1])
    }
    elapsed, count = t1 - t0, max(len(asked), 1)
    level.idle_ms_per_s = idle_cpu * 1000.0
    level.cpu_ms_per_item = ((cpu1 - cpu0) - idle_cpu * elapsed) * 1000.0 / count
    extra = counts_delta(requests0, requests1)
    beyond = {k: extra.get(k, 0.0) - idle_requests.get(k, 0.0) * elapsed for k in extra}
    lists = beyond.get(LIST_CALL, 0.0)
    reads = beyond.get(CONVERSATION_CALL, 0.0)
    other = sum(beyond.values()) - lists - reads
    level.requests_per_item = (lists / count, reads / count, other / count)

    def delays(arrival) -> list[float]:
        return [at - a.sent_at for a in asked if (at := arrival(a.pending_id)) is not None]

    posted = [d for d in delays(lambda p: cards.posts[p].at if p in cards.posts else None)]
    level.floor = Summary.of_seconds(delays(floor.arrival))
    level.push = Summary.of_seconds(posted)
    level.missing = len(asked) - len(posted)
    extra_posts = set(cards.post_counts) - {a.pending_id for a in asked}
    if extra_posts or cards.duplicates():
        result.problems.append(
            f"{level.waiting} waiting: {len(extra_posts)} waiting bundles posted again, "
            f"{cards.duplicates()} duplicates"
        )
    return asked


def filled_store(
    world: World, fake: FakeSlack, name: str, bundles: Sequence[tuple[Bundle, TaskInfo]]
) -> Path:
    """A bot store (``<name>.db``) in which every waiting bundle's card is recorded and posted
    (in ``fake``, as the bot renders it), as in the big-queues scenario."""
    database = world.work_dir / f"{name}.db"
    channels = {r.workspace_id: r.channel for r in world.routes}
    gateway = SlackGateway(make_web_client(fake.workspace.bot_token, fake.api_url))
    with Database(f"sqlite:///{database}") as store:

        def post(item: tuple[Bundle, TaskInfo]) -> None:
            bundle, task = item
            channel = channels[task.workspace_id]
            store.cards.record_card(NewCard(bundle, task, channel))
            card = store.cards.get(bundle.pending_id)
            assert card is not None
            message = card_message(card, "https://kandev.example.test")
            ts = gateway.post_card(channel, message, bundle.pending_id)
            store.cards.mark_posted(bundle.pending_id, channel, ts)

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(post, bundles))
    return database


def _window(pid: int, metrics: str, seconds: float) -> tuple[float, dict[str, float]]:
    """The bot's CPU seconds per second and Kandev requests per second over ``seconds``."""
    cpu0, requests0, t0 = cpu_seconds(pid), request_counts(metrics), time.monotonic()
    time.sleep(seconds)
    cpu1, requests1, t1 = cpu_seconds(pid), request_counts(metrics), time.monotonic()
    elapsed = t1 - t0
    grown = counts_delta(requests0, requests1)
    return (cpu1 - cpu0) / elapsed, {k: v / elapsed for k, v in grown.items()}


def _ask_spaced(direct: DirectBundles, slots: Sequence[Slot], spacing: float) -> list[Asked]:
    rng = random.Random(15)
    asked = []
    for slot in slots:
        asked.append(direct.ask(slot))
        time.sleep(spacing * rng.uniform(0.75, 1.25))
    return asked
