"""A wake-up signal one part of the bot raises and another waits on.

The app's build step makes each signal and hands it to both sides (e.g. the publisher raises
"a card changed" and the Home refresher waits on it; push hints raise "look at Kandev now" and
the sync loop waits on it), so no component holds another's method to call.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

T = TypeVar("T")


class Signal:
    """A named, thread-safe flag: ``raise_()`` from anywhere, ``wait()`` / ``take()`` in one
    worker. Raising it again before it is taken is the same as raising it once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._event = threading.Event()

    def raise_(self, *_args: object) -> None:
        """Set the flag (extra arguments are accepted and ignored, so it fits any hook)."""
        self._event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until raised (or ``timeout`` seconds); True if it is raised."""
        return self._event.wait(timeout)

    def take(self) -> bool:
        """Whether it was raised, clearing it."""
        raised = self._event.is_set()
        self._event.clear()
        return raised

    def is_raised(self) -> bool:
        return self._event.is_set()

    def __repr__(self) -> str:
        return f"Signal({self.name!r}, raised={self.is_raised()})"


class Inbox(Generic[T]):
    """Items one part hands to one worker (e.g. the bundles push hints announce), in order and
    each once; ``put`` also raises ``wakes``, the signal that worker waits on."""

    def __init__(self, name: str, wakes: Signal) -> None:
        self.name = name
        self.wakes = wakes
        self._lock = threading.Lock()
        self._items: list[T] = []

    def put(self, item: T) -> None:
        with self._lock:
            self._items.append(item)
        self.wakes.raise_()

    def drain(self) -> list[T]:
        """Every item put since the last drain, oldest first."""
        with self._lock:
            items, self._items = self._items, []
        return items

    def __repr__(self) -> str:
        with self._lock:
            return f"Inbox({self.name!r}, items={len(self._items)})"
