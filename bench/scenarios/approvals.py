"""12. Approvals: an agent's tool-permission request → its card, a click → the agent has the
option, and the sweep's cost.

Kandev pushes no event naming a request (kandev-permissions.md §0): every client gets
``session.pending_action_changed {"pending_action": "permission", task_id}`` and must list that
task's requests. The floor does exactly that and nothing else — a bare WebSocket client that,
on the push, lists the task over its own warm MCP session — so nothing can show a card sooner.
Each request is timed from the moment the harness' mock agent sent it (``asked_at`` in its
record, ``time.time()`` on this machine).

Then every request is resolved: the even ones by a signed "Allow once" click on the bot's card,
the odd ones by Kandev's own resolve (``resolve_agent_permission_kandev``) from a bare warm MCP
client — each timed until the agent has the option (``answered_at`` in its record).

Last, the sweep. With ``sweep`` requests waiting, one task each, and the push hints up, an
interval in which nothing changed (the *idle* interval) reads the workspaces' task lists and
nothing else (kandev_slack/usecases/intake/approvals.py): its Kandev requests by call and the
bot's CPU time, per interval, over whole intervals, beside the floor (one read per page of the
task lists) and the targets (≤ one task-list read per page; ≤ 50 ms of CPU at 200 waiting).
Then the *full* sweep the bot still runs every ``KANDEV_FULL_SWEEP_INTERVAL`` (60 s) with hints,
and every interval without (the bot restarted with ``KANDEV_HINTS=off``): each workspace's
task lists, then the request list of every task flagged ``permission`` or with a card still
waiting and a session read per waiting card (the cancelled-turn check), beside what a bare client
needs to learn the same (one task list per workspace and one request list per flagged task).
Last, with hints again, all are resolved in Kandev and the idle interval is measured once more.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bench.cardlog import CardLog
from bench.floor import PendingActionFloor
from bench.kandev import delete_tasks
from bench.procstat import cpu_seconds
from bench.scenarios.kandev_requests import counts_delta, request_counts
from bench.stats import Summary
from bench.transport import KeepAliveTransport
from bench.world import World, wait_synced
from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import SlackDriver
from tests.kit.harness import (
    LIST_TOOL,
    RESOLVE_TOOL,
    BotProcess,
    KandevServer,
    McpSession,
    Permissions,
    permission_spec,
)

SPACING_S = 1.0  # between two requests, so that no two share a channel within a second
SETTLE_S = 2.0
AGENT_TIMEOUT_S = 30.0
LISTED_TIMEOUT_S = 60.0
BATCH = 5  # agents started at once for the sweep (more time out in Kandev on a busy machine)
ALLOW = "allow_once"


def _request(n: int) -> dict[str, Any]:
    return permission_spec(
        f"Run make check-{n}", "execute", {"command": f"make check-{n}", "cwd": "/repo"}
    )


#: The target of an idle interval's bot CPU time at 200 waiting (issue 35).
IDLE_CPU_MS = 50.0
SWEEPS_METRIC = "kandev_slack_approval_sweeps"
SWEEP_CPU_METRIC = "kandev_slack_approval_sweep_cpu_seconds"


@dataclass(frozen=True)
class SweepCost:
    """One window of the idle bot: per poll interval. ``mode``: ``idle`` (hints up, nothing
    changed: the light interval) or ``full`` (every interval a full sweep: hints off);
    ``pages``: how many task-list pages one read of every workspace takes."""

    waiting: int
    tasks: int
    requests: dict[str, float]  # by kind: task lists, request lists, session reads, other
    cpu_ms: float
    floor_requests: int
    floor_ms: float  # a bare client's wall time for those requests, once
    mode: str = "full"
    pages: int = 0
    #: The CPU time of one sweep of its kind, on its own thread (the bot's metric).
    sweep_cpu_ms: float = 0.0
    #: The harness' own /metrics reads inside the window, left out of ``cpu_ms``: their CPU
    #: and count per interval, and one read's CPU.
    probe_ms: float = 0.0
    probe_reads: float = 0.0
    read_ms: float = 0.0

    @property
    def sweep(self) -> float:
        """The sweep's requests per interval (the question poll's left out)."""
        return sum(v for k, v in self.requests.items() if k in SWEEP_KINDS)


@dataclass
class ApprovalBench:
    count: int = 0
    floor_card: Summary | None = None
    bot_card: Summary | None = None
    click_agent: Summary | None = None
    resolve_agent: Summary | None = None
    ack: Summary | None = None
    sweeps: list[SweepCost] = field(default_factory=list)
    duplicates: int = 0
    problems: list[str] = field(default_factory=list)


def run(world: World, *, count: int, sweep: int, cycles: int = 3) -> ApprovalBench:
    kandev = world.kandev
    result = ApprovalBench(count=count)
    fake = world.fake_slack()
    bot = world.bot(fake, "approvals")
    floor = PendingActionFloor(kandev.base_url, kandev.token).start()
    permissions = Permissions(kandev)
    transport = KeepAliveTransport(bot.events_url, fake.workspace.signing_secret)
    resolver = McpSession(kandev.base_url, kandev.token)
    task_ids: list[str] = []
    samples: dict[str, list[float]] = {k: [] for k in ("floor", "card", "click", "mcp", "ack")}
    try:
        bot.start()
        wait_synced(bot)
        time.sleep(SETTLE_S)
        log = CardLog(fake)
        for n in range(count):
            workspace_id = world.workspace_ids[n % len(world.workspace_ids)]
            task_ids.append(
                permissions.start([_request(n)], f"Bench approval {n}", workspace_id=workspace_id)
            )
            time.sleep(SPACING_S)
        asked = _asked_requests(kandev, floor, task_ids, result)
        keys = [approval_key(r["request_id"]) for r in asked.values()]
        if not log.wait_posted(keys, timeout=LISTED_TIMEOUT_S):
            result.problems.append("not every approval got a card within 60 s")
        for task_id, listed in asked.items():
            at = _asked_at(kandev, task_id)
            key = approval_key(listed["request_id"])
            if at is None:
                continue
            samples["floor"].append(floor.listed_at[listed["request_id"]] - at)
            if key in log.posts:
                samples["card"].append(log.posts[key].at - at)
        resolver.call_tool(LIST_TOOL, {"task_id": task_ids[0]})  # warm the bare client
        driver = SlackDriver(fake, transport)
        for n, (task_id, listed) in enumerate(asked.items()):
            key = approval_key(listed["request_id"])
            if n % 2 == 0 and key in log.posts:
                channel, ts = log.card(key)
                ack = driver.click(channel, ts, text="Allow once")
                sent = transport.last_sent_at
                samples["ack"].append(ack.elapsed)
                if ack.status != 200:
                    result.problems.append(f"click on {key}: HTTP {ack.status}")
                    continue
                _time_agent(kandev, task_id, sent, samples["click"], result)
            else:
                sent = time.time()
                resolver.call_tool(RESOLVE_TOOL, _resolve_arguments(listed))
                _time_agent(kandev, task_id, sent, samples["mcp"], result)
            time.sleep(0.2)
        log.pump()
        result.duplicates = log.duplicates()
        delete_tasks(kandev, task_ids)
        task_ids.clear()
        if sweep > 0:
            task_ids += _sweep(world, bot, log, floor, permissions, resolver, sweep, cycles, result)
    finally:
        transport.close()
        resolver.close()
        floor.stop()
        bot.stop()
        delete_tasks(kandev, task_ids)
    result.floor_card = Summary.of_seconds(samples["floor"])
    result.bot_card = Summary.of_seconds(samples["card"])
    result.click_agent = Summary.of_seconds(samples["click"])
    result.resolve_agent = Summary.of_seconds(samples["mcp"])
    result.ack = Summary.of_seconds(samples["ack"])
    return result


def _sweep(
    world: World,
    bot: BotProcess,
    log: CardLog,
    floor: PendingActionFloor,
    permissions: Permissions,
    resolver: McpSession,
    count: int,
    cycles: int,
    result: ApprovalBench,
) -> list[str]:
    """Seed ``count`` waiting requests, measure the idle interval (hints on) and the full sweep
    (hints off); resolve them all, measure the idle interval again. Returns the task ids (the
    caller deletes them)."""
    kandev = world.kandev
    workspaces = world.workspace_ids

    def start(n: int) -> str:
        return permissions.start(
            [_request(n)], f"Bench sweep {n}", workspace_id=workspaces[n % len(workspaces)]
        )

    task_ids: list[str] = []
    with ThreadPoolExecutor(BATCH) as pool:
        for first in range(0, count, BATCH):
            task_ids += pool.map(start, range(first, min(first + BATCH, count)))
            time.sleep(0.5)
    asked = _asked_requests(kandev, floor, task_ids, result, timeout=LISTED_TIMEOUT_S + count)
    keys = [approval_key(r["request_id"]) for r in asked.values()]
    if not log.wait_posted(keys, timeout=LISTED_TIMEOUT_S + count):
        result.problems.append(f"sweep: not every one of {count} approvals got a card")
    interval = float(bot.env["KANDEV_POLL_INTERVAL"])
    waiting = len(asked)

    def window(mode: str, waiting: int, flagged: Sequence[str]) -> SweepCost:
        time.sleep(interval * 2)  # let the posting (or the restart) settle
        return _window(bot, mode, waiting, len(task_ids), workspaces, flagged, resolver, cycles)

    result.sweeps.append(window("idle", waiting, []))
    _restart(bot, KANDEV_HINTS="off")
    result.sweeps.append(window("full", waiting, task_ids))
    _restart(bot, KANDEV_HINTS="on")
    for listed in asked.values():  # one bare client, one at a time
        resolver.call_tool(RESOLVE_TOOL, _resolve_arguments(listed))
    _wait_all_edited(log, keys, timeout=LISTED_TIMEOUT_S, result=result)
    result.sweeps.append(window("idle", 0, []))
    return task_ids


def _restart(bot: BotProcess, **env: str) -> None:
    bot.env.update(env)
    bot.restart()
    wait_synced(bot)


def _window(
    bot: BotProcess,
    mode: str,
    waiting: int,
    tasks: int,
    workspaces: Sequence[str],
    flagged: Sequence[str],
    resolver: McpSession,
    cycles: int,
) -> SweepCost:
    """The bot's requests and CPU time per poll interval over ``cycles`` whole intervals:
    from just after one of its sweeps to just after the ``cycles``-th next one (an idle window
    in which a full sweep ran is measured again: it runs once a minute)."""
    interval = float(bot.env["KANDEV_POLL_INTERVAL"])
    url = bot.events_url.rsplit("/slack/", 1)[0] + "/metrics"
    pid = bot.proc.pid if bot.proc is not None else None
    read_ms = _read_cpu_ms(url, pid)
    for _ in range(3):
        before, sweeps0, _reads = _after_a_sweep(url, interval)
        cpu0, t0 = cpu_seconds(pid) if pid else 0.0, time.monotonic()
        time.sleep(max(t0 + interval * cycles - 0.15 - time.monotonic(), 0.0))
        after, sweeps1, reads = _after_a_sweep(url, interval)
        cpu1, t1 = cpu_seconds(pid) if pid else 0.0, time.monotonic()
        ran = {k: sweeps1.get(k, 0.0) - sweeps0.get(k, 0.0) for k in sweeps1}
        if mode != "idle" or not ran.get("full"):
            break
    # The window runs from the end of one sweep to the end of the n-th next: n intervals.
    intervals = ran.get("light", 0.0) + ran.get("full", 0.0)
    per = 1.0 / intervals if intervals else interval / (t1 - t0)
    requests: dict[str, float] = {}
    for call, n in counts_delta(before, after).items():
        kind = _kind(call)
        requests[kind] = requests.get(kind, 0.0) + n * per
    kind = "light" if mode == "idle" else "full"
    count = ran.get(kind, 0.0)
    floor_requests, floor_ms, pages = _bare_sweep(resolver, bot, workspaces, flagged)
    return SweepCost(
        waiting=waiting,
        tasks=tasks,
        requests=requests,
        # the whole process, less the harness' own reads of /metrics at the window's end
        cpu_ms=max((cpu1 - cpu0) * 1000.0 - reads * read_ms, 0.0) * per,
        probe_ms=reads * read_ms * per,
        probe_reads=reads * per,
        read_ms=read_ms,
        floor_requests=pages if mode == "idle" else floor_requests,
        floor_ms=floor_ms,
        mode=mode,
        pages=pages,
        sweep_cpu_ms=ran.get(f"cpu {kind}", 0.0) * 1000.0 / count if count else 0.0,
    )


def _after_a_sweep(url: str, interval: float) -> tuple[dict[str, float], dict[str, float], int]:
    """The bot's request and sweep counts just after its next sweep ends, and how many times
    they were read (each read of /metrics costs the bot CPU time: see :func:`_read_cpu_ms`)."""
    first, reads = _sweeps(url), 1
    deadline = time.monotonic() + interval * 6  # a full sweep of hundreds may take longer
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now, reads = _sweeps(url), reads + 1
        if now.get("light", 0.0) + now.get("full", 0.0) > first.get("light", 0.0) + first.get(
            "full", 0.0
        ):
            return request_counts(url), now, reads + 1
    return request_counts(url), first, reads + 1


def _read_cpu_ms(url: str, pid: int | None, reads: int = 10) -> float:
    """The bot's CPU time per read of its /metrics (the harness' own probe, left out of the
    idle interval's CPU: the bot serves it only because the benchmark asks)."""
    if pid is None:
        return 0.0
    before = cpu_seconds(pid)
    for _ in range(reads):
        httpx.get(url, timeout=10.0)
    return (cpu_seconds(pid) - before) * 1000.0 / reads


def _sweeps(url: str) -> dict[str, float]:
    """The bot's approval sweeps so far by kind, and their CPU seconds (``cpu <kind>``)."""
    text = httpx.get(url, timeout=10.0).text
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not sample.name.endswith("_total"):
                continue
            if family.name == SWEEPS_METRIC:
                found[sample.labels["kind"]] = sample.value
            elif family.name == SWEEP_CPU_METRIC:
                found[f"cpu {sample.labels['kind']}"] = sample.value
    return found


def _bare_sweep(
    resolver: McpSession, bot: BotProcess, workspaces: Sequence[str], flagged: Sequence[str]
) -> tuple[int, float, int]:
    """What a bare client needs to learn the same: each workspace's task list (every
    workspace Kandev has, as the bot sweeps them all), then each flagged task's requests.
    Returns (requests, wall ms, task-list pages at the bot's page size)."""
    base = bot.env["KANDEV_URL"].rstrip("/")
    token = bot.env.get("KANDEV_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    size = int(bot.env.get("KANDEV_TASKS_PAGE_SIZE", "100"))
    pages = 0
    with httpx.Client(base_url=base, headers=headers, timeout=30.0, trust_env=False) as http:
        listed = http.get("/api/v1/workspaces").json().get("workspaces") or []
        every = [w["id"] for w in listed] or list(workspaces)
        started = time.perf_counter()
        for workspace_id in every:
            page = http.get(f"/api/v1/workspaces/{workspace_id}/tasks", params={"limit": 100})
            pages += max(1, math.ceil(int(page.json().get("total") or 0) / size))
        requests = len(every)
    for task_id in flagged:
        resolver.call_tool(LIST_TOOL, {"task_id": task_id})
        requests += 1
    return requests, (time.perf_counter() - started) * 1000.0, pages


#: What the bot's request counts are, by call (``kandev_slack_kandev_requests_total``'s
#: ``call`` label); the sweep's are the first three, the question poll's the last two.
TASK_LIST_CALL = "GET workspaces/:id/tasks"
KINDS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("task lists", lambda call: call == TASK_LIST_CALL),
    ("request lists", lambda call: call.endswith("list_pending_agent_permissions_kandev")),
    ("session reads", lambda call: call == "GET task-sessions/:id"),
    ("question lists", lambda call: call.endswith("list_pending_questions_kandev")),
    ("workspace list", lambda call: call == "GET workspaces"),
)
SWEEP_KINDS = ("task lists", "request lists", "session reads")


def _kind(call: str) -> str:
    return next((name for name, matches in KINDS if matches(call)), "other")


def _asked_requests(
    kandev: KandevServer,
    floor: PendingActionFloor,
    task_ids: Sequence[str],
    result: ApprovalBench,
    *,
    timeout: float = LISTED_TIMEOUT_S,
) -> dict[str, dict[str, Any]]:
    """Each task's request as the floor listed it, waiting for them all."""
    deadline = time.monotonic() + timeout
    while True:
        found = {t: r for t in task_ids if (r := floor.listed(t)) is not None}
        if len(found) == len(task_ids) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if len(found) < len(task_ids):
        result.problems.append(f"the floor listed {len(found)} of {len(task_ids)} requests")
    return found


def _asked_at(kandev: KandevServer, task_id: str) -> float | None:
    asked = (kandev.agent_record(task_id) or {}).get("asked") or {}
    return min(asked.values()) if asked else None


def _time_agent(
    kandev: KandevServer, task_id: str, sent: float, into: list[float], result: ApprovalBench
) -> None:
    deadline = time.monotonic() + AGENT_TIMEOUT_S
    while time.monotonic() < deadline:
        got = (kandev.agent_record(task_id) or {}).get("permissions") or []
        if got:
            outcome = got[0].get("outcome") or {}
            if outcome.get("optionId") != ALLOW:
                result.problems.append(f"the agent of {task_id} got {outcome!r}")
            into.append(float(got[0]["answered_at"]) - sent)
            return
        time.sleep(0.01)
    result.problems.append(f"the agent of {task_id} got no option within {AGENT_TIMEOUT_S:.0f} s")


def _resolve_arguments(listed: dict[str, Any]) -> dict[str, str]:
    return {
        "task_id": listed["task_id"],
        "session_id": listed["session_id"],
        "request_id": listed["request_id"],
        "pending_id": listed["pending_id"],
        "option_id": ALLOW,
    }


def _wait_all_edited(log: CardLog, keys: Sequence[str], *, timeout: float, result) -> None:
    deadline = time.monotonic() + timeout
    for key in keys:
        if key not in log.posts:
            continue
        if log.wait_edit(key, 0.0, max(deadline - time.monotonic(), 0.1)) is None:
            result.problems.append(f"sweep: the card of {key} was not ended")
            return
