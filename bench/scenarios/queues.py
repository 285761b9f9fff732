"""8. Big queues: ``waiting`` bundles (1,000 by default) wait in Kandev at once.

Measured with that queue in place, on two bots in their production configuration (poll every
5 s), one with push hints and one polling only (``KANDEV_HINTS=off``), one after the other
(each alone with Kandev, as a bot runs in production):

- Kandev's own paged list of every waiting bundle from a bare MCP client (the floor of a poll
  cycle: the bot must read that list every cycle, 200 bundles a page), and its list of the
  newest bundles only (what the bot reads on a push hint: part of a new card's time);
- the CPU time of each bot process per poll cycle while idle (CPU over a window ÷ the cycles
  in it; the other workers' wake-ups are included, as in the footprint scenario);
- time to card of ``fresh`` new bundles among the waiting ones, beside a bare WebSocket
  client's notification (the floor), asked one at a time like the time-to-card scenario;
- acks of ``/kandev-questions`` (whose list covers every waiting bundle) on the push bot;
- the push bot's Kandev requests per bundle answered in Kandev, beside the floor (that
  bundle's session conversation read once; the regular poll apart): kandev_requests.py.

The waiting bundles are agentless (``bench/kandev.py``), but every one needs a session of its
own, for which Kandev starts the harness' mock agent process: 0.1–0.4 s each on 2 CPUs (more
at once only queue up) and ~10 MB each, so the set-up dominates this scenario's time, and
1,000 need ~10 GB of memory. They are the run's ``World.waiting`` pool, which the footprint
scenario (just before) made already when it ran, and stay until Kandev is stopped (deleting
1,000 tasks takes minutes): this scenario runs last. Their cards are already in Slack
when the bots start, as if the bots had been running while the queue built up: each card is
posted to the fake Slack (rendered by the bot's own code, with its metadata) and recorded in
each bot's store beforehand. Posting 1,000 cards through the bot would otherwise measure
Slack's pace (1 post/s per channel: ~100 s over 10 channels), which the backlog scenario
covers.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bench import burst
from bench.cardlog import CardLog
from bench.floor import FloorClient
from bench.kandev import Asked, DirectBundles, Slot, delete_tasks
from bench.procstat import cpu_seconds
from bench.scenarios import kandev_requests
from bench.scenarios.kandev_requests import KandevRequests
from bench.stats import Summary
from bench.transport import KeepAliveTransport, PreparedTransport
from bench.world import World, wait_synced
from kandev_slack.core.clarification import Bundle
from kandev_slack.core.domain import NewCard, TaskInfo
from kandev_slack.kandev.replies import rfc3339
from kandev_slack.kits.fakeslack import FakeSlack, SlackDriver
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database
from kandev_slack.usecases.intake.sync import NEWEST_MARGIN_S
from kandev_slack.usecases.outbox.forgotten import MARGIN
from kandev_slack.usecases.outbox.messages import card_message
from tests.kit.harness import BotProcess

SLASH_COMMAND = "/kandev-questions"
SETTLE_S = 2.0  # after the bots' first cycles, before anything is measured
#: New bundles are asked this long after the bots' start at the earliest (see _measure).
RESTART_MARGIN_S = MARGIN.total_seconds() + 2.0
LIST_RUNS = 5
PAUSE_S = 0.1
WORKERS = 2  # sessions created at once (Kandev serialises them; more only adds contention)


@dataclass
class Queues:
    waiting: int
    fresh: int
    spacing_s: float
    window_s: float
    poll_interval_s: float
    prepare_s: float = 0.0
    listed: int = 0
    list_floor: Summary | None = None
    #: A push hint's read: the bundles created since shortly before the newest (bare client).
    newest_floor: Summary | None = None
    cpu_ms_per_cycle_push: float | None = None
    cpu_ms_per_cycle_poll: float | None = None
    floor: Summary | None = None
    push: Summary | None = None
    poll: Summary | None = None
    missing: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    ack_slash: Summary | None = None
    #: The same acks in the bot's own timing (its ``kandev_slack_ack_seconds``, from the request
    #: reaching Bolt to the ack): how many within each bucket bound (seconds, as text).
    slash_in_bot: dict[str, int] = field(default_factory=dict)
    #: The bot's garbage collections of the whole heap (generation 2) while the commands were
    #: sent (its ``kandev_slack_gc_pause_seconds``): how many took at most each bucket bound.
    slash_gc: dict[str, int] = field(default_factory=dict)
    slash_note: str = ""
    #: Waiting bundles answered in Kandev while the push bot runs, and its requests for them.
    answered: int = 0
    requests: KandevRequests | None = None
    problems: list[str] = field(default_factory=list)


def run(
    world: World,
    *,
    waiting: int,
    fresh: int,
    slash: int,
    spacing: float,
    window: float,
    answered: int = 5,
) -> Queues:
    direct = DirectBundles(world.kandev, workers=WORKERS)
    result = Queues(waiting, fresh, spacing, window, poll_interval_s=5.0, answered=answered)
    pool = world.waiting  # the footprint's, when it ran: at least ``waiting`` of them
    asked = pool.ask(waiting)
    queued = [pool.slot_of(a.pending_id) for a in asked]
    result.waiting = len(asked)
    # Each bot its own new bundles: the bots run one after the other (see _measure).
    newcomers = direct.prepare(world.workspace_ids, 2 * fresh, first=len(pool.slots))
    result.prepare_s = pool.prepare_s
    bundles = _listed(world, queued, {a.pending_id for a in asked}, result)
    fake_push, fake_poll = world.fake_slack(), world.fake_slack()
    push = world.bot(fake_push, "queues-push", db=_filled(world, fake_push, "push", bundles))
    poll = world.bot(
        fake_poll,
        "queues-poll",
        db=_filled(world, fake_poll, "poll", bundles),
        KANDEV_HINTS="off",
    )
    result.poll_interval_s = float(poll.env["KANDEV_POLL_INTERVAL"])
    answer = [b.pending_id for b, _ in bundles[-answered:]] if answered > 0 else []
    pool.forget(answer)  # answered in Kandev below
    _measure(
        world,
        direct,
        (newcomers[:fresh], newcomers[fresh:]),
        (push, poll),
        (fake_push, fake_poll),
        slash,
        result,
        answer,
    )
    return result


def _listed(
    world: World, queued: Sequence[Slot], ids: set[str], result: Queues
) -> list[tuple[Bundle, TaskInfo]]:
    """The waiting bundles as Kandev lists them, with their tasks (timing the bare client's
    paged list)."""
    took: list[float] = []
    listed: list[dict] = []
    for _ in range(LIST_RUNS):
        began = time.perf_counter()
        listed = world.kandev.list_pending()
        took.append(time.perf_counter() - began)
    result.list_floor = Summary.of_seconds(took)
    result.newest_floor = _newest_read(world, listed)
    routes = {r.workspace_id: r for r in world.routes}
    tasks = {
        slot.task_id: TaskInfo(
            task_id=slot.task_id,
            title=slot.title,
            workspace_id=slot.workspace_id,
            workspace_name=routes[slot.workspace_id].workspace_name,
        )
        for slot in queued
    }
    bundles = [Bundle.model_validate(b) for b in listed if b["pending_id"] in ids]
    result.listed = len(bundles)
    return [(b, tasks[b.task_id]) for b in bundles]


def _newest_read(world: World, listed: list[dict]) -> Summary | None:
    """Kandev's list of the bundles created since shortly before the newest one, from a bare
    client: what the bot reads when a push hint announces a new bundle
    (kandev_slack/usecases/intake/sync.py)."""
    if not listed:
        return None
    newest = max(datetime.fromisoformat(b["created_at"].replace("Z", "+00:00")) for b in listed)
    since = rfc3339(newest - timedelta(seconds=NEWEST_MARGIN_S))
    arguments = {"limit": 200, "created_since": since}
    took: list[float] = []
    for _ in range(LIST_RUNS * 4):
        began = time.perf_counter()
        world.kandev.mcp.call_tool("list_pending_questions_kandev", dict(arguments))
        took.append(time.perf_counter() - began)
    return Summary.of_seconds(took)


def _filled(
    world: World, fake: FakeSlack, name: str, bundles: Sequence[tuple[Bundle, TaskInfo]]
) -> Path:
    """A bot store in which every waiting bundle's card is claimed and posted (the card is in
    ``fake``, as the bot renders it)."""
    database = world.work_dir / f"queues-{name}.db"
    channels = {r.workspace_id: r.channel for r in world.routes}
    gateway = SlackGateway(make_web_client(fake.workspace.bot_token, fake.api_url))
    with Database(f"sqlite:///{database}") as store:

        def post(item: tuple[Bundle, TaskInfo]) -> None:
            bundle, task = item
            channel = channels[task.workspace_id]
            store.cards.record_card(NewCard(bundle, task, channel))
            card = store.cards.get(bundle.pending_id)
            assert card is not None
            ts = gateway.post_card(
                channel, card_message(card, "https://kandev.example.test"), bundle.pending_id
            )
            store.cards.mark_posted(bundle.pending_id, channel, ts)

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(post, bundles))
    return database


def _measure(
    world: World,
    direct: DirectBundles,
    newcomers: tuple[Sequence[Slot], Sequence[Slot]],
    bots: tuple[BotProcess, BotProcess],
    fakes: tuple[FakeSlack, FakeSlack],
    slash: int,
    result: Queues,
    answer: Sequence[str] = (),
) -> None:
    """The push bot, then the polling one, each alone with the queue, as a bot runs in
    production: each full read of 1,000 waiting bundles costs Kandev ~0.45 s, so a second bot
    running beside the first would load Kandev for the first's time to card (in the 09:10 run
    of 2026-12-06, with both running, the push bot's p95 was 105 ms, against 44 ms at 1,000
    waiting when noticing measured one bot). Each bot's new bundles are its own: the push
    bot's tasks are deleted before the polling bot starts."""
    (for_push, for_poll), (push, poll), (fake_push, fake_poll) = newcomers, bots, fakes
    floor = FloorClient(world.kandev.base_url, world.kandev.token).start()
    transport = KeepAliveTransport(push.events_url, fake_push.workspace.signing_secret)
    pushed, polled = CardLog(fake_push), CardLog(fake_poll)
    try:
        (result.cpu_ms_per_cycle_push,) = _started(push, result)
        asked = _ask_spaced(direct, for_push, result.spacing_s)
        ids = [a.pending_id for a in asked]
        pushed.wait_posted(ids, timeout=30.0)
        time.sleep(0.5)  # late floor notifications, if any
        _slash(
            SlackDriver(fake_push, transport),
            push.events_url,
            world.routes[0].channel,
            slash,
            result,
        )
        fake_push.settle(quiet=1.0, timeout=60.0)  # lists still being sent after their acks
        if answer:
            result.requests = kandev_requests.measure(
                world.kandev,
                push,
                fake_push,
                answer,
                waiting=result.listed + len(ids),  # the new bundles wait as well
                poll_interval_s=result.poll_interval_s,
            )
            result.problems += result.requests.problems
        pushed.pump()
        push.stop()
        delete_tasks(world.kandev, [slot.task_id for slot in for_push])
        (result.cpu_ms_per_cycle_poll,) = _started(poll, result)
        asked_poll = _ask_spaced(direct, for_poll, result.spacing_s)
        ids_poll = [a.pending_id for a in asked_poll]
        polled.wait_posted(ids_poll, timeout=result.poll_interval_s + 30.0)
        polled.pump()
    finally:
        transport.close()
        push.stop()
        poll.stop()
        floor.stop()

    def delays(asked: Sequence[Asked], arrival) -> list[float]:
        return [at - a.sent_at for a in asked if (at := arrival(a.pending_id)) is not None]

    def posted_at(log: CardLog):
        return lambda pending_id: log.posts[pending_id].at if pending_id in log.posts else None

    # The floor: the bare client's notifications of the push bot's bundles (the same moments).
    floor_s = delays(asked, floor.arrival)
    push_s, poll_s = delays(asked, posted_at(pushed)), delays(asked_poll, posted_at(polled))
    result.floor = Summary.of_seconds(floor_s)
    result.push = Summary.of_seconds(push_s)
    result.poll = Summary.of_seconds(poll_s)
    result.missing = {
        "floor": len(asked) - len(floor_s),
        "push": len(asked) - len(push_s),
        "poll": len(asked_poll) - len(poll_s),
    }
    # Every post the bots made: only each one's new bundles' cards, each once (the waiting
    # ones were already posted).
    result.duplicates = pushed.duplicates() + polled.duplicates()
    extra = (set(pushed.post_counts) - set(ids)) | (set(polled.post_counts) - set(ids_poll))
    if extra:
        result.problems.append(f"{len(extra)} waiting bundles were posted again")


def _started(bot: BotProcess, result: Queues) -> tuple[float, ...]:
    """Start ``bot`` and let it settle as if it had been running while the queue built up: its
    idle CPU per poll cycle (measured meanwhile). A bundle created within a minute of a bot's
    start may be one a lost database forgot, and its channel's recent history (here: every
    waiting card, posted just before) is read first (kandev_slack/usecases/outbox/forgotten.py),
    a restart's cost that is not noticing's: new bundles are asked only after that minute."""
    bot.start()
    began = time.monotonic()
    wait_synced(bot, timeout=60.0)
    time.sleep(SETTLE_S)
    cpu = _cpu_per_cycle((bot,), result.window_s, result.poll_interval_s)
    time.sleep(max(began + RESTART_MARGIN_S - time.monotonic(), 0.0))
    return cpu


def _cpu_per_cycle(bots: Sequence[BotProcess], window: float, interval: float) -> tuple[float, ...]:
    pids = [bot.proc.pid for bot in bots if bot.proc is not None]
    before, t0 = [cpu_seconds(pid) for pid in pids], time.monotonic()
    time.sleep(window)
    after, t1 = [cpu_seconds(pid) for pid in pids], time.monotonic()
    cycles = (t1 - t0) / interval
    return tuple((b - a) * 1000.0 / cycles for a, b in zip(before, after, strict=True))


def _ask_spaced(direct: DirectBundles, slots: Sequence[Slot], spacing: float) -> list[Asked]:
    rng = random.Random(8)
    asked = []
    for slot in slots:
        asked.append(direct.ask(slot))
        time.sleep(spacing * rng.uniform(0.75, 1.25))
    return asked


def _slash(driver: SlackDriver, url: str, channel: str, runs: int, result: Queues) -> None:
    """``runs`` commands, one every PAUSE_S, each on a new connection (as Slack's), sent and
    timed from a process of their own (bench/burst.py): from this one, which runs the fake
    Slack receiving the listings meanwhile, a timing would include this process's waits."""
    if runs <= 0:
        result.slash_note = "not run"
        return
    probe = driver.slash(SLASH_COMMAND, "", channel=channel)
    if probe.status != 200:
        result.slash_note = f"HTTP {probe.status}"
        return
    requests = []
    for _ in range(runs):
        prepared = PreparedTransport(url, driver.fake.workspace.signing_secret)
        SlackDriver(driver.fake, prepared).slash(SLASH_COMMAND, "", channel=channel)
        assert prepared.request is not None
        requests.append(prepared.request)
    metrics_url = url.rsplit("/slack/", 1)[0] + "/metrics"
    acks, pauses = ("kandev_slack_ack_seconds", "command"), ("kandev_slack_gc_pause_seconds", "2")
    before = _buckets(metrics_url, acks, pauses)
    sent = burst.send(requests, window=runs * PAUSE_S)
    after = _buckets(metrics_url, acks, pauses)
    result.slash_in_bot = _delta(before[acks], after[acks])
    result.slash_gc = _delta(before[pauses], after[pauses]) or {"+Inf": 0}  # none ran
    failed = [s.error or f"HTTP {s.status}" for s in sent if s.error or s.status != 200]
    if failed:
        result.problems.append(f"slash commands not acked: {failed[:3]}")
    result.ack_slash = Summary.of_seconds([s.elapsed for s in sent if s.elapsed is not None])


def _buckets(
    metrics_url: str, *histograms: tuple[str, str]
) -> dict[tuple[str, str], dict[str, float]]:
    """The bot's histograms named by (family, the value of its one label: ``kind`` or
    ``generation``): each a cumulative count per bucket bound."""
    text = httpx.get(metrics_url, timeout=10.0).text
    found: dict[tuple[str, str], dict[str, float]] = {h: {} for h in histograms}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not sample.name.endswith("_bucket"):
                continue
            label = sample.labels.get("kind", sample.labels.get("generation", ""))
            if (family.name, label) in found:
                found[(family.name, label)][sample.labels["le"]] = sample.value
    return found


def _delta(before: dict[str, float], after: dict[str, float]) -> dict[str, int]:
    return {le: int(after[le] - before.get(le, 0.0)) for le in after}
