"""Reserve a block of loopback ports for one Kandev server.

A Kandev server needs its HTTP port, an agentctl control port, a standalone agent port and a
range of per-task instance ports. Blocks are chosen at random below the kernel's ephemeral range
(so outgoing connections never take them), checked by binding every port, and held with a lock
file for the lifetime of the server so two harness servers on one machine never share a block.
A server that runs more agents than one block has instance ports for (the benchmark's backlog)
reserves several adjacent blocks at once (``reserve_block(cells=N)``); each is locked as usual.
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
    """``cells`` adjacent blocks: the fixed ports, then one instance range across them all."""

    base: int
    cells: int = 1

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
        return self.base + BLOCK_SIZE * self.cells - 1


class PortReservation:
    """A ``PortBlock`` plus the locks that keep other harness processes off it."""

    def __init__(self, block: PortBlock, locks: list[IO[str]]) -> None:
        self.block = block
        self._locks = locks

    def release(self) -> None:
        _unlock(self._locks)
        self._locks = []


class PortsInUse(RuntimeError):
    """The ports asked for (``reserve_block(base=…)``) are not all free."""

    def __init__(self, base: int, cells: int, busy: int) -> None:
        last = base + BLOCK_SIZE * cells - 1
        super().__init__(
            f"Kandev's ports {base}–{last} are not all free (port {busy} is in use)"
            if busy
            else f"Kandev's ports {base}–{last} are held by another local Kandev"
        )
        self.base = base
        self.busy = busy


def reserve_block(
    attempts: int = 200, *, cells: int = 1, base: int | None = None
) -> PortReservation:
    """A free block of ports (``base``: that one, its HTTP port ``base``, else ``PortsInUse``)."""
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    if base is not None:
        return _reserve_at(base, cells)
    highest = _ephemeral_low() - BLOCK_SIZE * cells
    candidates = list(range(LOWEST_PORT, highest, BLOCK_SIZE))
    for base in random.SystemRandom().sample(candidates, min(attempts, len(candidates))):
        locks = _lock_all([base + BLOCK_SIZE * n for n in range(cells)])
        if locks is None:
            continue
        if all(_is_free(port) for port in range(base, base + BLOCK_SIZE * cells)):
            return PortReservation(PortBlock(base, cells), locks)
        _unlock(locks)
    raise RuntimeError(f"no {cells} adjacent free block(s) of loopback ports for a Kandev server")


def _reserve_at(base: int, cells: int) -> PortReservation:
    if not 0 < base <= 65_535 - BLOCK_SIZE * cells:
        raise PortsInUse(base, cells, base)
    locks = _lock_all([base + BLOCK_SIZE * n for n in range(cells)])
    if locks is None:
        raise PortsInUse(base, cells, 0)
    busy = next((p for p in range(base, base + BLOCK_SIZE * cells) if not _is_free(p)), None)
    if busy is not None:
        _unlock(locks)
        raise PortsInUse(base, cells, busy)
    return PortReservation(PortBlock(base, cells), locks)


def _lock_all(bases: list[int]) -> list[IO[str]] | None:
    """Lock every block's file, or none (another harness process holds one of them)."""
    locks: list[IO[str]] = []
    for base in bases:
        lock = (LOCK_DIR / f"{base}.lock").open("w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            _unlock(locks)
            return None
        locks.append(lock)
    return locks


def _unlock(locks: list[IO[str]]) -> None:
    for lock in locks:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()


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


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` right now (the system's choice)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])
