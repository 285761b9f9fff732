"""Memory and CPU time of one process, and how busy the machine is, read from /proc (Linux,
like the Kandev runtime)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tests.kit.harness import descendants

_TICKS = os.sysconf("SC_CLK_TCK")


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(f"{field} not in /proc/{pid}/status")


def rss_mb(pid: int) -> float:
    """Resident set size now."""
    return _status_kb(pid, "VmRSS") / 1024.0


def peak_rss_mb(pid: int) -> float:
    """The highest resident set size the process ever had (VmHWM)."""
    return _status_kb(pid, "VmHWM") / 1024.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of every thread of the process so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def own_cpu_seconds() -> float:
    """User + system CPU time of this process and of its children that ended and were waited
    for (a burst's sender, run to its end within a phase)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@dataclass
class CpuSpent:
    """CPU seconds spent over one phase of a scenario, by whom: the bot's process, the
    benchmark's own (its process, which runs the fake Slack, its senders), and the rest of
    the machine (Kandev, its agents, and whatever else runs: the idle services add a few
    tens of ms a second)."""

    bot: float = 0.0
    bench: float = 0.0
    rest: float = 0.0

    def __add__(self, other: CpuSpent) -> CpuSpent:
        return CpuSpent(self.bot + other.bot, self.bench + other.bench, self.rest + other.rest)


class CpuMeter:
    """Counts the CPU the machine spends from :meth:`start` to :meth:`stop`, split as
    :class:`CpuSpent` says: ``bot`` is the bot's pid, ``bench`` the benchmark's own
    processes besides this one that stay alive through the phase (a Socket Mode sender)."""

    def __init__(self, bot: int, bench: Iterable[int] = ()) -> None:
        self._bot, self._bench = bot, tuple(bench)
        self._start: tuple[float, float, float] | None = None

    def _now(self) -> tuple[float, float, float]:
        busy, _ = machine_busy()
        own = own_cpu_seconds() + sum(cpu_seconds(pid) for pid in self._bench)
        return busy / _TICKS, cpu_seconds(self._bot), own

    def start(self) -> None:
        self._start = self._now()

    def stop(self) -> CpuSpent:
        if self._start is None:
            raise RuntimeError("CpuMeter.stop before start")
        (busy0, bot0, own0), (busy1, bot1, own1) = self._start, self._now()
        bot, own = max(bot1 - bot0, 0.0), max(own1 - own0, 0.0)
        return CpuSpent(bot=bot, bench=own, rest=max(busy1 - busy0 - bot - own, 0.0))


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def pin(root: int, cpus: set[int] | None) -> int:
    """Run ``root``, every process below it and each of their threads on ``cpus`` only (None:
    on every CPU again); processes they start later inherit it. Returns the threads pinned."""
    wanted = cpus if cpus is not None else set(range(os.cpu_count() or 1))
    pinned = 0
    for pid in [root, *descendants(root)]:
        try:
            tids = [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
        except OSError:
            continue  # gone meanwhile
        for tid in tids:
            try:
                os.sched_setaffinity(tid, wanted)
                pinned += 1
            except OSError:
                continue
    return pinned


def machine_busy() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine so far (/proc/stat's first line)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    total = sum(fields[:8])  # guest time is counted in user already
    return total - idle, total


def busy_fraction(over_s: float) -> float:
    """The share of every CPU's time spent busy over the next ``over_s`` seconds."""
    busy0, total0 = machine_busy()
    time.sleep(over_s)
    busy1, total1 = machine_busy()
    return (busy1 - busy0) / max(total1 - total0, 1)


def wait_quiet_machine(below: float = 0.15, over_s: float = 1.0, timeout: float = 60.0) -> float:
    """Wait until the machine's CPUs are busy less than ``below`` of a window of ``over_s``
    (``timeout`` at most: then go on). Returns the last window's busy share."""
    deadline = time.monotonic() + timeout
    while True:
        busy = busy_fraction(over_s)
        if busy < below or time.monotonic() >= deadline:
            return busy
