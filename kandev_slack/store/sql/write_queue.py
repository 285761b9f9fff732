"""This process's SQLite writers, one at a time, those an ack is waiting for first.

SQLite lets one transaction write at a time. Under a crowd, the write that records a click (its
ack waits for it) would otherwise queue behind the bookkeeping of earlier clicks whose answers
came back from Kandev (card states, outbox rows, audit entries): dozens of writes nobody is
waiting for. Writers entered with :func:`urgent` go first; then those entered with
:func:`soon` (an answer acknowledged, on its way to Kandev: the fence right before it is
sent); the others keep their turn among themselves. Re-entrant, like the lock it replaces (a
write inside a write is the same turn).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_marks = threading.local()


@contextmanager
def urgent() -> Iterator[None]:
    """Writes of this thread within the block go before those of other writers (an ack is
    waiting for them)."""
    before = getattr(_marks, "urgent", False)
    _marks.urgent = True
    try:
        yield
    finally:
        _marks.urgent = before


def is_urgent() -> bool:
    return getattr(_marks, "urgent", False)


@contextmanager
def soon() -> Iterator[None]:
    """Writes of this thread within the block go after the urgent ones but before the
    others' (a person's answer waits for them on its way to Kandev)."""
    before = getattr(_marks, "soon", False)
    _marks.soon = True
    try:
        yield
    finally:
        _marks.soon = before


def is_soon() -> bool:
    return getattr(_marks, "soon", False)


class WriteQueue:
    """A re-entrant lock whose urgent waiters are served before the others."""

    def __init__(self) -> None:
        lock = threading.Lock()
        self._urgent_turn = threading.Condition(lock)
        self._soon_turn = threading.Condition(lock)
        self._other_turn = threading.Condition(lock)
        self._owner: int | None = None
        self._depth = 0
        self._urgent_waiting = 0
        self._soon_waiting = 0
        self._others_waiting = 0

    def __enter__(self) -> WriteQueue:
        me = threading.get_ident()
        with self._urgent_turn:  # the one lock behind both conditions
            if self._owner == me:
                self._depth += 1
                return self
            if is_urgent():
                self._urgent_waiting += 1
                try:
                    while self._owner is not None:
                        self._urgent_turn.wait()
                finally:
                    self._urgent_waiting -= 1
            elif is_soon():
                self._soon_waiting += 1
                try:
                    while self._owner is not None or self._urgent_waiting:
                        self._soon_turn.wait()
                finally:
                    self._soon_waiting -= 1
            else:
                self._others_waiting += 1
                try:
                    while self._owner is not None or self._urgent_waiting or self._soon_waiting:
                        self._other_turn.wait()
                finally:
                    self._others_waiting -= 1
            self._owner, self._depth = me, 1
            return self

    def __exit__(self, *exc_info: object) -> None:
        with self._urgent_turn:
            self._depth -= 1
            if self._depth:
                return
            self._owner = None
            if self._urgent_waiting:
                self._urgent_turn.notify()
            elif self._soon_waiting:
                self._soon_turn.notify()
            elif self._others_waiting:
                self._other_turn.notify()
