"""``python -m bench``: run the benchmark, print its tables, write them to bench/results.md.

Starts a real Kandev (the npm runtime, as the tests do), fake Slacks and the bot as a process
in its production configuration, runs the measurements in the order of ``SCENARIOS`` — time to
card, answering (click to answer, acks, resolved elsewhere), conversation, approvals, crowds (HTTP
and Socket Mode), backlog, reminders, … and last the two that share 1,000 waiting bundles,
footprint and big queues — and tears everything down. The tables end with the summary of every
target (printed last, and written into docs/performance.md between its markers).
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.burst import SWITCH_INTERVAL_S
from bench.kandev import start_kandev
from bench.procstat import load_average
from bench.report import Results, render, render_summary_table
from bench.scenarios import (
    answering,
    approvals,
    backlog,
    conversation,
    crowd,
    digest,
    footprint,
    identical,
    identity,
    notice,
    queues,
    quiet,
    reminders,
    replicas,
    time_to_card,
)
from bench.summary import block, write_docs
from bench.world import DEFAULT_POLL_INTERVAL, World
from tests.kit.harness import BLOCK_SIZE, INSTANCE_OFFSET, KANDEV_VERSION

SCENARIOS = (
    "ttc",
    "answers",
    "conversation",
    "approvals",
    "crowd",
    "backlog",
    "reminders",
    "quiet",
    "replicas",
    "digest",
    "identical",
    "identity",
    # The last three share the run's 1,000 waiting bundles (World.waiting), which stay until
    # Kandev stops: nothing may run after them.
    "notice",
    "footprint",
    "queues",
)
#: The scenarios of the 1,000 waiting bundles (~10 GB of mock agents and their sessions).
THOUSAND_WAITING = ("notice", "footprint", "queues")
RESULTS = Path(__file__).with_name("results.md")
DOCS = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
PORT_MARGIN = 20


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--ttc", type=int, default=50, help="bundles for time to card (default 50)")
    p.add_argument(
        "--spacing", type=float, default=0.6, help="seconds between two new bundles (0.6)"
    )
    p.add_argument("--clicks", type=int, default=30, help="bundles answered by a click (30)")
    p.add_argument(
        "--replies", type=int, default=20, help="bundles answered by a thread reply's Send (20)"
    )
    p.add_argument("--rest", type=int, default=30, help="bundles answered over REST (30)")
    p.add_argument("--modals", type=int, default=20, help="bundles answered by a modal (20)")
    p.add_argument("--slash", type=int, default=30, help="slash commands run (30)")
    p.add_argument("--conversations", type=int, default=10, help="Conversation views opened (10)")
    p.add_argument("--approvals", type=int, default=30, help="approvals timed and resolved (30)")
    p.add_argument(
        "--approval-sweep", type=int, default=200, help="approvals waiting for the sweep (200)"
    )
    p.add_argument("--crowd", type=int, default=50, help="people clicking at once (50)")
    p.add_argument(
        "--crowd-window", type=float, default=1.0, help="seconds the crowd's clicks span (1)"
    )
    p.add_argument(
        "--crowd-rounds",
        type=int,
        default=2,
        help="crowds per transport and CPU arrangement, pooled (2; a fresh bot and bundles each)",
    )
    p.add_argument(
        "--crowd-cpus",
        default="split,shared",
        help="CPU arrangements of the crowd (split: the bot on a CPU of its own; shared)",
    )
    p.add_argument(
        "--crowd-modes",
        default="http,socket",
        help="Slack transports the crowd runs over (http,socket)",
    )
    p.add_argument("--backlog", type=int, default=200, help="backlog bundles (200; 300 fits)")
    p.add_argument(
        "--reminded", type=int, default=300, help="bundles reminded while new ones come (300)"
    )
    p.add_argument("--fresh", type=int, default=20, help="bundles asked during reminders (20)")
    p.add_argument("--quiet", type=int, default=50, help="bundles waiting through quiet hours (50)")
    p.add_argument(
        "--replica-backlog",
        type=int,
        default=1000,
        help="bundles waiting for the replicas (1000; ~100 s at 10 channels)",
    )
    p.add_argument("--replicas", type=int, default=3, help="bot replicas on PostgreSQL (3)")
    p.add_argument(
        "--waiting",
        type=int,
        default=1000,
        help="bundles waiting at once in queues (1000; or the footprint's, if more)",
    )
    p.add_argument("--queue-fresh", type=int, default=20, help="new bundles asked among them (20)")
    p.add_argument("--queue-slash", type=int, default=20, help="slash commands among them (20)")
    p.add_argument(
        "--queue-answered",
        type=int,
        default=5,
        help="waiting bundles answered in Kandev, counting the bot's Kandev requests (5)",
    )
    p.add_argument(
        "--queue-window", type=float, default=15.0, help="CPU window s with them waiting (15)"
    )
    p.add_argument(
        "--notice-levels",
        default="10,100,1000",
        help="bundles waiting while new ones are noticed, grown in turn (10,100,1000)",
    )
    p.add_argument(
        "--notice-new",
        type=int,
        default=notice.NEW,
        help=f"new bundles asked at each level ({notice.NEW})",
    )
    p.add_argument("--channels", type=int, default=10, help="routed channels (10)")
    p.add_argument(
        "--cards", type=int, default=100_000, help="cards in the store (100000; and a tenth)"
    )
    p.add_argument(
        "--footprint-pending",
        type=int,
        default=1000,
        help="cards waiting, real Kandev bundles (1000; the queues scenario's, made once)",
    )
    p.add_argument(
        "--footprint-backend",
        choices=footprint.BACKENDS,
        action="append",
        help="measure only these stores (default: sqlite and postgresql)",
    )
    p.add_argument("--footprint-poll", type=float, default=1.0, help="poll s for CPU/cycle (1)")
    p.add_argument("--footprint-window", type=float, default=6.0, help="CPU window s (6)")
    p.add_argument(
        "--digest-waiting", type=int, default=1000, help="items waiting for the digest (1000)"
    )
    p.add_argument("--digest-rounds", type=int, default=10, help="digests built (10)")
    p.add_argument(
        "--identical", type=int, default=10, help="identical questions in one channel (10)"
    )
    p.add_argument(
        "--identity",
        type=int,
        default=20,
        help="clicks with a person's own token, and as many with the bot's (20)",
    )
    p.add_argument("--only", choices=SCENARIOS, action="append", help="run only these")
    p.add_argument("--out", type=Path, default=RESULTS, help="where to write the tables")
    p.add_argument(
        "--docs",
        type=Path,
        default=DOCS,
        help="the document whose summary block the run replaces (docs/performance.md)",
    )
    p.add_argument(
        "--no-docs", action="store_true", help="leave the document's summary block as it is"
    )
    p.add_argument(
        "--keep", action="store_true", help="keep the work dir (kandev_slack/Kandev logs)"
    )
    return p.parse_args(argv)


def port_cells(args: argparse.Namespace) -> int:
    """Harness port blocks needed for the most tasks alive at once."""
    live = max(
        args.ttc,
        args.clicks + args.rest + args.modals,
        args.conversations,
        args.approvals,
        args.approval_sweep,
        2 * args.crowd,
        args.backlog,
        args.reminded + args.fresh,
        args.backlog + args.replica_backlog,  # the backlog's tasks live until Kandev stops
        # the waiting bundles (notice, footprint and queues share them), the queues' new
        # ones, a click
        max(args.footprint_pending, args.waiting, notice_live(args)) + args.queue_fresh + 1,
        2 * args.identical,
    )
    live += PORT_MARGIN
    return max(1, math.ceil((live + INSTANCE_OFFSET) / BLOCK_SIZE))


def notice_levels(args: argparse.Namespace) -> list[int]:
    return sorted({int(level) for level in args.notice_levels.split(",") if level.strip()})


def notice_live(args: argparse.Namespace) -> int:
    """Waiting bundles the notice scenario leaves: its largest level and every level's new
    ones."""
    levels = notice_levels(args)
    return max(levels, default=0) + args.notice_new * len(levels)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    given = sys.argv[1:] if argv is None else argv
    # The harness (fake Slack, load threads, timers) switches threads as often as the bot does,
    # so that what it times is not its own interpreter's wait.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    chosen = [s for s in SCENARIOS if not args.only or s in args.only]
    began, load_before = time.monotonic(), load_average()
    work_dir = Path(tempfile.mkdtemp(prefix="kandev-bench-"))
    results = Results(poll_interval_s=float(DEFAULT_POLL_INTERVAL))
    say(f"work dir {work_dir}; starting Kandev {KANDEV_VERSION}")
    kandev = start_kandev(port_cells(args))
    world = World(kandev, work_dir, args.channels)
    try:
        for n, name in enumerate(chosen):
            if fresh_kandev_before(chosen, n):
                # Kandev's agentctl keeps what every session of the run used (9.4 GB by the
                # twelfth scenario of a whole run on 2026-12-07, against ~10 GB that the 1,000
                # waiting agents need beside it): the runs of the 6th stopped at 850-950. A
                # restart (same data, workspaces and token) gives that memory back.
                say("restarting Kandev before the 1,000 waiting bundles …")
                kandev.restart()
            started = time.monotonic()
            say(f"{name} …")
            try:
                run_scenario(name, world, args, results)
            except Exception as exc:  # report it with the other results, go on with the rest
                results.failures[name] = f"{type(exc).__name__}: {exc}"[:2000]
                say(f"{name} FAILED: {exc}\n{traceback.format_exc()}")
            say(f"{name} done in {time.monotonic() - started:.0f} s")
    finally:
        world.close()
        say("stopping Kandev …")
        kandev.close()
        if args.keep:
            say(f"kept {work_dir}")
        else:
            shutil.rmtree(work_dir, ignore_errors=True)
    run = RunInfo(
        command="python -m bench" + ("" if not given else " " + shlex.join(given)),
        when=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        elapsed_s=time.monotonic() - began,
        load_before=load_before,
        load_after=load_average(),
        compiled=world.compiled,
    )
    text = render(results, run.preamble())
    print(text)  # the summary last
    args.out.write_text(text)
    say(f"written to {args.out}")
    if not args.no_docs:
        write_docs(args.docs, block(render_summary_table(results), run.about()))
        say(f"summary written to {args.docs}")
    return 1 if results.failures else 0


def fresh_kandev_before(chosen: list[str], n: int) -> bool:
    """Whether Kandev is restarted before the ``n``-th chosen scenario: the first of the 1,000
    waiting bundles' scenarios, when others ran before it in this run."""
    return chosen[n] in THOUSAND_WAITING and n > 0 and chosen[n - 1] not in THOUSAND_WAITING


def run_scenario(name: str, world: World, args: argparse.Namespace, results: Results) -> None:
    if name == "ttc":
        results.ttc = time_to_card.run(world, count=args.ttc, spacing=args.spacing)
    elif name == "answers":
        results.answers = answering.run(
            world,
            clicks=args.clicks,
            rests=args.rest,
            modals=args.modals,
            slash=args.slash,
            replies=args.replies,
        )
    elif name == "conversation":
        results.conversation = conversation.run(world, count=args.conversations)
    elif name == "approvals":
        results.approvals = approvals.run(world, count=args.approvals, sweep=args.approval_sweep)
    elif name == "crowd":
        modes = [m.strip() for m in args.crowd_modes.split(",") if m.strip()]
        results.crowd = crowd.run(
            world,
            crowd=args.crowd,
            window=args.crowd_window,
            modes=modes,
            rounds=args.crowd_rounds,
            cpus=[c.strip() for c in args.crowd_cpus.split(",") if c.strip()],
        )
    elif name == "footprint":
        results.footprint = footprint.run(
            world,
            cards=args.cards,
            pending=args.footprint_pending,
            poll_interval=args.footprint_poll,
            window=args.footprint_window,
            backends=args.footprint_backend or footprint.BACKENDS,
        )
    elif name == "backlog":
        results.backlog = backlog.run(world, count=args.backlog)
    elif name == "reminders":
        results.reminders = reminders.run(world, count=args.reminded, fresh=args.fresh)
    elif name == "quiet":
        results.quiet = quiet.run(world, count=args.quiet)
    elif name == "replicas":
        results.replicas = replicas.run(world, count=args.replica_backlog, replicas=args.replicas)
    elif name == "digest":
        results.digest = digest.run(world, waiting=args.digest_waiting, rounds=args.digest_rounds)
    elif name == "identical":
        results.identical = identical.run(world, count=args.identical)
    elif name == "identity":
        results.identity = identity.run(world, clicks=args.identity)
    elif name == "notice":
        results.notice = notice.run(
            world, levels=notice_levels(args), new=args.notice_new, spacing=args.spacing
        )
    elif name == "queues":
        results.queues = queues.run(
            world,
            waiting=args.waiting,
            fresh=args.queue_fresh,
            slash=args.queue_slash,
            spacing=args.spacing,
            window=args.queue_window,
            answered=args.queue_answered,
        )


@dataclass(frozen=True)
class RunInfo:
    command: str
    when: str
    elapsed_s: float
    load_before: str
    load_after: str
    #: The bot's bytecode written before its processes started (bench/world.py compile_bot).
    compiled: bool = True

    def about(self) -> str:
        """One line: what ran, when, how long, the machine's load."""
        return (
            f"`{self.command}` — {self.when}, {self.elapsed_s:.0f} s on {os.cpu_count()} CPUs "
            f"(load average before: {self.load_before}, after: {self.load_after})."
        )

    def preamble(self) -> str:
        return (
            f"## kandev-slack benchmark, {self.when}\n\n"
            f"`{self.command}` — {self.elapsed_s:.0f} s on {os.cpu_count()} CPUs (load average "
            f"before: {self.load_before}, after: {self.load_after}). Kandev {KANDEV_VERSION} "
            "(npm runtime, SQLite); the bot as a process: `kandev-slack run --http` (waitress), "
            f"SQLite file, poll interval {DEFAULT_POLL_INTERVAL} s, push hints on unless stated; "
            "fake Slack on loopback; "
            + (
                "its bytecode compiled beforehand, as an installed package has it."
                if self.compiled
                else "its bytecode NOT written (each start compiled its modules)."
            )
        )


def say(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
