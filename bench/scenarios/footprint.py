"""6. Footprint: the bot's memory when idle, with an empty store and with many cards in it, and
the CPU time one idle poll cycle costs.

The cards are written through ``bot.store.Store`` into the bot's SQLite file before it starts:
resolved cards (answered / rejected / ended), i.e. the history a long-running bot accumulates;
pending cards are bounded by what Kandev lists at a time. CPU per cycle is the process's CPU
time over a window divided by the poll cycles in it, with a short poll interval (1 s by
default) so that enough cycles fit; between cycles the outbox worker also wakes once a second.
The history is written while the empty-store bot is measured.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.procstat import cpu_seconds, peak_rss_mb, rss_mb
from bench.world import Route, World, wait_synced
from bot.domain import CardOutcome, CardState, TaskInfo
from bot.kandev.models import Answer, Bundle, Option, Question
from bot.store import Store
from tests.harness import BotProcess

WARMUP_S = 3.0


@dataclass(frozen=True)
class Idle:
    cards: int
    rss_mb: float
    peak_rss_mb: float
    cpu_ms_per_cycle: float
    cpu_percent: float
    cycles: float


@dataclass(frozen=True)
class Footprint:
    poll_interval_s: float
    window_s: float
    fill_s: float
    empty: Idle
    full: Idle


def run(world: World, *, cards: int, poll_interval: float, window: float) -> Footprint:
    fake = world.fake_slack()
    env = {"KANDEV_POLL_INTERVAL": f"{poll_interval:g}"}
    database = world.work_dir / "history.db"
    timing: dict[str, float] = {}

    def fill() -> None:
        started = time.monotonic()
        fill_store(database, world.routes, cards)
        timing["fill_s"] = time.monotonic() - started

    # The history is written while the empty-store bot idles: only that bot's own CPU time and
    # memory are measured, which a busy neighbour does not change.
    filler = threading.Thread(target=fill, name="fill-store", daemon=True)
    filler.start()
    empty = _measure(world.bot(fake, "idle-empty", **env), 0, poll_interval, window)
    filler.join()
    if "fill_s" not in timing:
        raise RuntimeError("filling the store failed (see the traceback above)")
    full = _measure(world.bot(fake, "idle-full", db=database, **env), cards, poll_interval, window)
    return Footprint(poll_interval, window, timing["fill_s"], empty, full)


def _measure(bot: BotProcess, cards: int, interval: float, window: float) -> Idle:
    bot.start()
    try:
        wait_synced(bot)
        time.sleep(WARMUP_S)
        assert bot.proc is not None
        pid = bot.proc.pid
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(window)
        cpu1, t1 = cpu_seconds(pid), time.monotonic()
        cycles = (t1 - t0) / interval
        return Idle(
            cards=cards,
            rss_mb=rss_mb(pid),
            peak_rss_mb=peak_rss_mb(pid),
            cpu_ms_per_cycle=(cpu1 - cpu0) * 1000.0 / cycles,
            cpu_percent=(cpu1 - cpu0) * 100.0 / (t1 - t0),
            cycles=cycles,
        )
    finally:
        bot.stop()


def fill_store(database: Path, routes: list[Route], count: int) -> None:
    """``count`` resolved cards, as the bot itself would have recorded them."""
    states = (CardState.ANSWERED, CardState.ANSWERED, CardState.REJECTED, CardState.ENDED)
    now = datetime.now(UTC)
    with Store(f"sqlite:///{database}") as store:
        for n in range(count):
            route = routes[n % len(routes)]
            pending_id, task_id = str(uuid.uuid4()), str(uuid.uuid4())
            bundle = _bundle(pending_id, task_id, now - timedelta(minutes=count - n))
            store.claim(
                pending_id,
                task_id=task_id,
                session_id=str(uuid.uuid4()),
                workspace_id=route.workspace_id,
                channel=route.channel,
                bundle=bundle,
                task=TaskInfo(
                    task_id=task_id,
                    title=f"Historic task {n}",
                    workspace_id=route.workspace_id,
                    workspace_name=route.workspace_name,
                ),
            )
            store.mark_posted(pending_id, route.channel, f"{1_700_000_000 + n}.000100")
            state = states[n % len(states)]
            answers = [Answer(question_id="q1", selected_options=["q1_opt2"])]
            store.transition(
                pending_id,
                CardOutcome(
                    state=state,
                    via="slack" if state is CardState.ANSWERED else "kandev",
                    by_user="U0ALICE001" if state is CardState.ANSWERED else None,
                    answers=answers if state is CardState.ANSWERED else [],
                    at=now,
                ),
            )


def _bundle(pending_id: str, task_id: str, created_at: datetime) -> Bundle:
    return Bundle(
        pending_id=pending_id,
        task_id=task_id,
        created_at=created_at,
        context="We need to choose how to store the *orders* before the migration.",
        questions=[
            Question(
                question_id="q1",
                title="Database",
                prompt="Which database should we use for **orders**?",
                status="answered",
                options=[
                    Option(option_id="q1_opt1", label="PostgreSQL", description="Relational"),
                    Option(option_id="q1_opt2", label="MongoDB", description="Document store"),
                    Option(option_id="q1_opt3", label="SQLite", description="One file"),
                ],
            )
        ],
    )
