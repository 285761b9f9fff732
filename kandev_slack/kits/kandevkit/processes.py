"""Stop a process and everything it spawned (Kandev's backend runs in its own session)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path


def descendants(root: int) -> list[int]:
    """Every live process below ``root``, found through ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces or parentheses; fields follow the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    queue = [root]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def stop_tree(process: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """Stop ``process`` gracefully, then harder; SIGKILL every descendant that outlives it.

    SIGTERM asks for a graceful shutdown; Kandev's launcher turns a second SIGTERM into a forced
    shutdown of its backend; SIGKILL is the last resort.
    """
    if process.poll() is not None:
        return
    tree = descendants(process.pid)
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(_alive(pid) for pid in tree):
        time.sleep(0.1)
    for pid in tree:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2 :].split()[0] != "Z"
