"""In-memory fakes of the edges the use-cases talk to: the clock, Kandev's client and Slack's
gateway. They are fakes of external systems, never of our own services."""

from __future__ import annotations

from datetime import datetime, timedelta


class FakeClock:
    """A settable UTC clock (``clock.advance(10)``), called like ``datetime.now(UTC)``."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now
