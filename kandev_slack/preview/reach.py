"""Whether the Kandev the preview's bot talks to answers (``GET /health``, which needs no
token): when it does not, the page says which URL it cannot reach, instead of an empty
channel that only says "No messages yet" while the terminal fills with the bot's warnings."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import httpx

from kandev_slack.ops.redaction import without_userinfo

log = logging.getLogger("kandev_slack.preview.reach")
HEALTH_PATH = "/health"
#: How often it asks (and how long one question may take).
EVERY_S = 3.0
TIMEOUT_S = 2.0


def unreachable_text(url: str) -> str:
    """What the page says while nothing answers at ``url`` (shown without its password)."""
    return (
        f"Cannot reach Kandev at {without_userinfo(url)}: no question can come from it. "
        "Start Kandev there, set KANDEV_URL to where it runs, or run "
        "`kandev-slack preview --with-kandev` (a local Kandev with scripted agents)."
    )


def problem_at(url: str, *, timeout: float = TIMEOUT_S) -> str | None:
    """``None`` when Kandev answers at ``url`` (any HTTP answer), else what the page says."""
    try:
        httpx.get(url.rstrip("/") + HEALTH_PATH, timeout=timeout)
    except httpx.HTTPError:
        return unreachable_text(url)
    return None


class KandevWatch:
    """Asks every :data:`EVERY_S` seconds in a thread of its own; ``problem`` is the latest
    answer and ``changed()`` is called whenever it changes."""

    def __init__(self, url: str, changed: Callable[[], None], every: float = EVERY_S) -> None:
        self.url = url
        self.every = every
        self.problem: str | None = None
        self._changed = changed
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> str | None:
        found = problem_at(self.url)
        if found != self.problem:
            self.problem = found
            if found:
                log.warning("Kandev is not reachable at %s", without_userinfo(self.url))
            self._changed()
        return found

    def start(self) -> KandevWatch:
        self.check()
        self._thread = threading.Thread(target=self._run, name="preview-kandev-watch")
        self._thread.daemon = True
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.check()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=TIMEOUT_S + 1)
