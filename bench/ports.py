"""A wider block of loopback ports for the benchmark's Kandev.

Every live Kandev task holds one agent instance port. The harness reserves
``tests.harness.ports.INSTANCE_PORTS`` (290) per server, fewer than a 300-bundle backlog needs,
so the benchmark locks several adjacent harness blocks at once (the same lock files, so test
runs on the same machine keep off them) and gives Kandev all their instance ports.
"""

from __future__ import annotations

import fcntl
import random
from dataclasses import dataclass
from typing import IO

from tests.harness.ports import (
    BLOCK_SIZE,
    LOCK_DIR,
    LOWEST_PORT,
    PortBlock,
    PortReservation,
    _ephemeral_low,
    _is_free,
)


@dataclass(frozen=True)
class WideBlock(PortBlock):
    """``cells`` adjacent harness blocks: the usual fixed ports, then one long instance range."""

    cells: int = 2

    @property
    def instance_last(self) -> int:
        return self.base + BLOCK_SIZE * self.cells - 1


class WideReservation(PortReservation):
    def __init__(self, block: WideBlock, locks: list[IO[str]]) -> None:
        super().__init__(block, locks[0])
        self._more = locks[1:]

    def release(self) -> None:
        super().release()
        for lock in self._more:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
        self._more = []


def reserve_wide(cells: int, attempts: int = 200) -> WideReservation:
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    highest = _ephemeral_low() - BLOCK_SIZE * cells
    candidates = list(range(LOWEST_PORT, highest, BLOCK_SIZE))
    for base in random.SystemRandom().sample(candidates, min(attempts, len(candidates))):
        locks = _lock_all([base + BLOCK_SIZE * n for n in range(cells)])
        if locks is None:
            continue
        if all(_is_free(port) for port in range(base, base + BLOCK_SIZE * cells)):
            return WideReservation(WideBlock(base, cells), locks)
        _unlock(locks)
    raise RuntimeError(f"no {cells} adjacent free blocks of loopback ports for Kandev")


def _lock_all(bases: list[int]) -> list[IO[str]] | None:
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
