"""A wake-up signal one part of the bot raises and another waits on.

The app's build step makes each signal and hands it to both sides (e.g. the publisher raises
"a card changed" and the Home refresher waits on it; push hints raise "look at Kandev now" and
the sync loop waits on it), so no component holds another's method to call.
"""

from __future__ import annotations

import threading


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
