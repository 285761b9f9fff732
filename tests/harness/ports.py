"""Reserve a block of loopback ports for one Kandev server.

A Kandev server needs its HTTP port, an agentctl control port, a standalone agent port and a
range of per-task instance ports. Blocks are chosen at random below the kernel's ephemeral range
(so outgoing connections never take them), checked by binding every port, and held with a lock
file for the lifetime of the server so two harness servers on one machine never share a block.
"""

from __future__ import annotations

import contextlib
import fcntl
import random
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

BLOCK_SIZE = 300
INSTANCE_OFFSET = 10
INSTANCE_PORTS = BLOCK_SIZE - INSTANCE_OFFSET
LOWEST_PORT = 10_000
LOCK_DIR = Path(tempfile.gettempdir()) / "kandev-harness-ports"


@dataclass(frozen=True)
class PortBlock:
    base: int

    @property
    def http(self) -> int:
        return self.base

    @property
    def agentctl(self) -> int:
        return self.base + 1

    @property
    def agent_standalone(self) -> int:
        return self.base + 2

    @property
    def instance_first(self) -> int:
        return self.base + INSTANCE_OFFSET

    @property
    def instance_last(self) -> int:
        return self.base + BLOCK_SIZE - 1


class PortReservation:
    """A ``PortBlock`` plus the lock that keeps other harness processes off it."""

    def __init__(self, block: PortBlock, lock_file: IO[str]) -> None:
        self.block = block
        self._lock_file: IO[str] | None = lock_file

    def release(self) -> None:
        if self._lock_file is not None:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None


def reserve_block(attempts: int = 200) -> PortReservation:
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    highest = _ephemeral_low() - BLOCK_SIZE
    candidates = list(range(LOWEST_PORT, highest, BLOCK_SIZE))
    rng = random.SystemRandom()
    for base in rng.sample(candidates, min(attempts, len(candidates))):
        lock_file = (LOCK_DIR / f"{base}.lock").open("w")
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock_file.close()
            continue
        if all(_is_free(port) for port in range(base, base + BLOCK_SIZE)):
            return PortReservation(PortBlock(base), lock_file)
        fcntl.flock(lock_file, fcntl.LOCK_UN)
        lock_file.close()
    raise RuntimeError("no free block of loopback ports found for a Kandev server")


def _is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ephemeral_low() -> int:
    with contextlib.suppress(OSError, ValueError, IndexError):
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        return int(text.split()[0])
    return 32_768
