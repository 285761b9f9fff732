"""What one click on a question card costs the bot: Kandev requests (by call) and CPU time.

``python -m bench.click_cost [--clicks N] [--window S] [--channels C] [--distinct]``: a real
Kandev, a fake Slack and the bot as a process (HTTP, push hints on, as in the benchmark);
N bundles seeded (identical questions per workspace, as the crowd's; ``--distinct``: each
its own), their cards posted; the bot's request counts and CPU over an idle window, then N
people click one option each, spread over ``--window`` seconds, until every card is edited and
the bot is quiet again: what it sent and spent beyond its idle rate, per click.
"""

from __future__ import annotations

import argparse
import math
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bench import burst
from bench.cardlog import CardLog
from bench.kandev import delete_tasks, seed_spread, start_kandev
from bench.procstat import cpu_seconds, load_average
from bench.scenarios.kandev_requests import counts_delta, request_counts
from bench.stats import percentile
from bench.transport import PreparedTransport
from bench.world import World, wait_synced
from kandev_slack.kits.fakeslack import SlackDriver, SlackUser
from tests.kit.harness import BLOCK_SIZE, INSTANCE_OFFSET

OPTION = "Option 1.2"


def port_cells(clicks: int) -> int:
    return max(1, math.ceil((clicks + 20 + INSTANCE_OFFSET) / BLOCK_SIZE))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.click_cost")
    p.add_argument("--clicks", type=int, default=20)
    p.add_argument("--window", type=float, default=1.0)
    p.add_argument("--channels", type=int, default=5)
    p.add_argument("--idle", type=float, default=10.0, help="idle window s (10)")
    p.add_argument("--settle", type=float, default=8.0, help="s after the last edit (8)")
    p.add_argument("--profile", type=Path, help="py-spy's collapsed stacks of the clicks here")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="click-cost-"))
    kandev = start_kandev(port_cells(args.clicks))
    world = World(kandev, work, args.channels)
    bundles = []
    try:
        fake = world.fake_slack()
        bot = world.bot(fake, "cost")
        log = CardLog(fake)
        bot.start()
        wait_synced(bot)
        bundles = seed_spread(kandev, world.workspace_ids, args.clicks)
        if not log.wait_posted([b.pending_id for b in bundles], timeout=120.0):
            print("not every card posted", file=sys.stderr)
        fake.settle(quiet=2.0, timeout=60.0)
        metrics = bot.events_url.rsplit("/slack/", 1)[0] + "/metrics"
        pid = bot.proc.pid
        before, cpu0, t0 = request_counts(metrics), cpu_seconds(pid), time.monotonic()
        time.sleep(args.idle)
        idle = counts_delta(before, request_counts(metrics))
        idle_cpu, idle_s = cpu_seconds(pid) - cpu0, time.monotonic() - t0
        people = [
            fake.add_user(SlackUser(id=f"U0COST{n:03d}", name=f"p{n}")) for n in range(len(bundles))
        ]
        prepared = []
        for bundle, person in zip(bundles, people, strict=True):
            channel, ts = log.card(bundle.pending_id)
            transport = PreparedTransport(bot.events_url, fake.workspace.signing_secret)
            SlackDriver(fake, transport).click(channel, ts, text=OPTION, user=person)
            prepared.append(transport.request)
        spy = _py_spy(pid, args.profile) if args.profile else None
        acked_before = _acks_within(metrics)
        before, cpu0, t0 = request_counts(metrics), cpu_seconds(pid), time.monotonic()
        slack_before = len(fake.calls())
        sent = burst.send(prepared, args.window)
        acks = sorted(s.elapsed * 1000 for s in sent if s.elapsed is not None)
        for bundle, s in zip(bundles, sent, strict=True):
            if log.wait_edit(bundle.pending_id, s.sent_at, 30.0) is None:
                print(f"{bundle.pending_id}: not edited", file=sys.stderr)
        fake.settle(quiet=1.0, timeout=60.0)
        time.sleep(args.settle)
        busy = counts_delta(before, request_counts(metrics))
        slack_calls = Counter(c.method for c in fake.calls()[slack_before:])
        busy_cpu, busy_s = cpu_seconds(pid) - cpu0, time.monotonic() - t0
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(30)
        n = len(bundles)
        extra = {
            k: (busy.get(k, 0.0) - idle.get(k, 0.0) * busy_s / idle_s) / n
            for k in sorted(busy | idle)
        }
        print(f"load average {load_average()}; {n} clicks over {args.window}s, {args.channels} ch")
        rate, idle_ms = sum(idle.values()) / idle_s, idle_cpu / idle_s * 1000
        print(f"idle: {rate:.2f} req/s, {idle_ms:.0f} ms CPU/s")
        for k, v in extra.items():
            print(f"  {v:6.2f}  {k}")
        print(f"Kandev requests per click: {sum(extra.values()):.2f}")
        for method, count in sorted(slack_calls.items()):
            print(f"  {count / n:6.2f}  {method}")
        print(f"Slack calls per click: {sum(slack_calls.values()) / n:.2f}")
        cpu = (busy_cpu - idle_cpu * busy_s / idle_s) / n
        print(f"bot CPU per click: {cpu * 1000:.1f} ms (busy {busy_cpu:.2f}s over {busy_s:.1f}s)")
        print(
            "acks ms: "
            + " ".join(f"p{q} {percentile(acks, q):.1f}" for q in (50, 95, 99))
            + f" max {acks[-1]:.1f}"
        )
        within = {le: n - acked_before.get(le, 0.0) for le, n in _acks_within(metrics).items()}
        print(
            "the bot's own acks (kandev_slack_ack_seconds): "
            + ", ".join(
                f"{n:.0f} within {float(le) * 1000:.0f} ms"
                for le, n in within.items()
                if le in ("0.01", "0.025", "0.05", "0.1", "0.25")
            )
        )
    finally:
        delete_tasks(kandev, [b.task_id for b in bundles])
        world.close()
        kandev.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _acks_within(metrics_url: str) -> dict[str, float]:
    """The bot's clicks acknowledged so far, by the bound they were acked within (seconds)."""
    text = httpx.get(metrics_url, timeout=10.0).text
    return {
        sample.labels["le"]: sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "kandev_slack_ack_seconds"
        for sample in family.samples
        if sample.name.endswith("_bucket") and sample.labels.get("kind") == "block_actions"
    }


def _py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling ``pid`` (the thread holding the GIL: where its Python CPU goes) until
    SIGINT."""
    spy = Path(sys.executable).with_name("py-spy")
    command = [
        str(spy),
        "record",
        "-p",
        str(pid),
        "-f",
        "raw",
        "-o",
        str(out),
        "-r",
        "200",
        "--nonblocking",
        "--gil",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached
    return proc


if __name__ == "__main__":
    raise SystemExit(main())
