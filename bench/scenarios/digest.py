"""13. Digest of 1,000 waiting items: how long the bot takes to decide and build one person's
digest — Kandev's list read and joined, who may answer checked, the first items rendered, the
(target, date) row claimed and the post enqueued — and what it sends (messages, blocks,
characters), beside a floor measured in the same run: the listing's answer
(``/kandev-questions``, its first page) for the same person and the same items.

In-process, with the bot's own code (kandev_slack/usecases/followups/digests.py), a SQLite
store in the work dir and the real publisher; Kandev and Slack are the in-memory fakes of
tests/kit/fakes.py (Kandev's answer time and Slack's pace are not what is measured here: the
queues scenario and the backlog measure those).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bench.stats import Summary
from bench.world import World
from kandev_slack.cards.limits import blocks_text_length
from kandev_slack.config.routing import Routing
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.surfaces.digest import digest_renderer
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.followups.digests import DigestCommand, Digests
from kandev_slack.usecases.tasks import TaskDirectory
from kandev_slack.usecases.views.listing import ListingService
from kandev_slack.usecases.views.waiting import Permalinks, SharedReads, WaitingQueue
from kandev_slack.wiring import build_publisher
from tests.kit.factories import make_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway

KANDEV_URL = "https://kandev.example.test"
CHANNEL = "C0DIGEST01"
WORKSPACES = 10
#: A Monday, 09:00:30 UTC: every person's 09:00 digest is due.
DUE = datetime(2025, 3, 31, 9, 0, 30, tzinfo=UTC)


@dataclass(frozen=True)
class DigestBench:
    waiting: int
    rounds: int
    build: Summary | None
    listing_floor: Summary | None
    messages_per_digest: float
    blocks: int
    block_text: int
    items_shown: int


def run(world: World, *, waiting: int, rounds: int) -> DigestBench:
    path = world.work_dir / "digest-bench.db"
    store = Database(f"sqlite:///{path}")
    try:
        return _measure(store, waiting, rounds)
    finally:
        store.close()


def _measure(store: Database, waiting: int, rounds: int) -> DigestBench:
    kandev, slack = FakeKandev(), FakeSlackGateway()
    for n in range(waiting):
        bundle = make_bundle(
            pending_id=f"p-digest-{n}",
            task_id=f"t-digest-{n}",
            created_at=DUE - timedelta(minutes=n),
        )
        workspace = n % WORKSPACES
        priority = ("critical", "high", "", "low")[n % 4]
        kandev.add(
            bundle,
            title=f"Task {n} waiting for an answer",
            workspace_id=f"ws-{workspace}",
            workspace_name=f"Workspace {workspace}",
            priority=priority,
        )
    routing = Routing(default_channel=CHANNEL)
    permissions = Answerers(routing, slack)
    tasks = TaskDirectory(kandev)
    queue = WaitingQueue(
        kandev, store.cards, routing, tasks, Permalinks(slack), permissions, SharedReads()
    )
    publisher = build_publisher(
        store.outbox,
        store.cards,
        store.audit_log,
        slack,
        kandev_url=KANDEV_URL,
        health=Health(),
        post_spacing_s=0,
    )
    clock = [DUE - timedelta(days=1)]
    digests = Digests(
        store.digests,
        queue,
        routing,
        slack,
        publisher.wake,
        digest_renderer(KANDEV_URL),
        clock=lambda: clock[0],
    )
    listing = ListingService(queue, kandev, kandev_url=KANDEV_URL)
    build, floor = [], []
    for round_ in range(rounds):
        user = f"U0DIGEST{round_:03d}"
        clock[0] = DUE - timedelta(days=1)
        digests.answer(DigestCommand("set", "09:00"), user)
        clock[0] = DUE
        started = time.perf_counter()
        listing.reply("", user)
        floor.append(time.perf_counter() - started)
        started = time.perf_counter()
        made = digests.send_due()
        build.append(time.perf_counter() - started)
        assert made == 1, f"round {round_}: {made} digests built"
    while publisher.work_once():
        pass
    sent = list(slack.messages.values())
    last = sent[-1] if sent else None
    shown = sum(1 for b in last.blocks if str(b.get("block_id", "")).startswith("kq_digest:"))
    return DigestBench(
        waiting=waiting,
        rounds=rounds,
        build=Summary.of_seconds(build),
        listing_floor=Summary.of_seconds(floor),
        messages_per_digest=len(sent) / rounds if rounds else 0.0,
        blocks=len(last.blocks) if last else 0,
        block_text=blocks_text_length(last.blocks) if last else 0,
        items_shown=shown if last else 0,
    )
