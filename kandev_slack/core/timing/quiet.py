"""Quiet hours: a daily range of local wall-clock time in one time zone during which
reminders, escalations and DM cards wait (pure).

A range is written ``19:00-08:00`` (``HH:MM``, or ``HH:MM:SS``); it may cross midnight. Each
local calendar day ``d`` gives exactly one *window*, an interval of absolute time: from the
first instant the local clock shows the start on ``d`` to the first instant it shows the end
(on ``d``, or on ``d + 1`` when the range crosses midnight). So a DST change never gives a
night two windows (no duplicated summary) nor none (no lost summary):

- a wall-clock time that occurs twice (autumn) is taken at its first occurrence;
- one that does not occur (spring) is taken as Python reads it (``fold=0``: shifted forward
  by the gap), so ``02:30`` on that day is ``03:30`` summer time.

:func:`quiet_until` tells whether an instant is inside a window and when that window ends;
every instant of one window answers the same end, which is what makes the held items' summary
one per window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_CLOCK = r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?"
RANGE = re.compile(rf"^{_CLOCK}\s*-\s*{_CLOCK}$")

#: What is wrong with a range (worded by kandev_slack.cards.words).
BadRange = Literal["format", "clock", "empty"]


class QuietError(ValueError):
    """A range or a time zone that cannot be used; ``problem`` says which way."""

    def __init__(self, problem: str, value: str) -> None:
        super().__init__(f"{problem}: {value!r}")
        self.problem = problem
        self.value = value


@dataclass(frozen=True)
class QuietHours:
    """``start``-``end`` every day, in ``tz`` (an IANA name such as ``Europe/Berlin``)."""

    start: time
    end: time
    tz: str = "UTC"

    @property
    def crosses_midnight(self) -> bool:
        return self.end < self.start

    def text(self) -> str:
        """The range as written back (``19:00-08:00``)."""
        return f"{clock_text(self.start)}-{clock_text(self.end)}"


def clock_text(value: time) -> str:
    return value.strftime("%H:%M:%S" if value.second else "%H:%M")


def _clock(hours: str, minutes: str, seconds: str | None, text: str) -> time:
    h, m, s = int(hours), int(minutes), int(seconds or 0)
    if h > 23 or m > 59 or s > 59:
        raise QuietError("clock", text)
    return time(h, m, s)


def parse_range(text: str) -> tuple[time, time]:
    """``"19:00-08:00"`` → (19:00, 08:00); QuietError ("format", "clock" or "empty")."""
    match = RANGE.match((text or "").strip()) if isinstance(text, str) else None
    if match is None:
        raise QuietError("format", str(text))
    start = _clock(match.group(1), match.group(2), match.group(3), text)
    end = _clock(match.group(4), match.group(5), match.group(6), text)
    if start == end:
        raise QuietError("empty", text)
    return start, end


def zone(name: str) -> tzinfo:
    """The time zone named ``name`` (IANA); QuietError ("tz") when there is none such."""
    if not isinstance(name, str) or not name.strip() or name.strip() != name:
        raise QuietError("tz", str(name))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise QuietError("tz", name) from None


def quiet_hours(text: str, tz: str = "UTC") -> QuietHours:
    """Parse a range and check its time zone (QuietError naming the bad one)."""
    start, end = parse_range(text)
    zone(tz)
    return QuietHours(start, end, tz)


def _instant(day: date, clock: time, tz: tzinfo) -> datetime:
    """The absolute instant the local clock shows ``clock`` on ``day`` (see the module)."""
    return datetime.combine(day, clock, tzinfo=tz).astimezone(UTC)


def windows(hours: QuietHours, around: datetime) -> list[tuple[datetime, datetime]]:
    """The windows of the local days around ``around`` (UTC instants), oldest first; a
    window whose end does not follow its start (a range inside a DST gap) is left out."""
    tz = zone(hours.tz)
    today = around.astimezone(tz).date()
    found = []
    for offset in (-2, -1, 0, 1):
        day = today + timedelta(days=offset)
        start = _instant(day, hours.start, tz)
        end_day = day + timedelta(days=1) if hours.crosses_midnight else day
        end = _instant(end_day, hours.end, tz)
        if end > start:
            found.append((start, end))
    return found


def quiet_until(hours: QuietHours, now: datetime) -> datetime | None:
    """The end (UTC) of the window ``now`` is in, or None when ``now`` is not quiet. When
    two windows overlap around a DST change, the one that started first counts."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    for start, end in windows(hours, now):
        if start <= now < end:
            return end
    return None


def release_at(now: datetime, *ranges: QuietHours | None) -> datetime | None:
    """When something held at ``now`` under every quiet range in ``ranges`` may go out (the
    latest end among the ranges that are quiet now), or None when none of them is."""
    ends = [end for hours in ranges if hours is not None if (end := quiet_until(hours, now))]
    return max(ends) if ends else None


#: At most this many items are listed in a summary (the rest are counted).
MAX_LISTED = 20
#: The Kandev priority whose items always go through quiet hours.
CRITICAL = "critical"


def is_critical(priority: str | None) -> bool:
    return (priority or "").casefold() == CRITICAL


@dataclass(frozen=True)
class Listed:
    """One waiting item in a summary: its question, its card's link, whether critical."""

    headline: str
    link: str | None
    critical: bool


@dataclass(frozen=True)
class HeldRow:
    """Something that waits for quiet hours to end: ``target`` (a channel or user id) gets it
    in its summary at ``release_at``."""

    key: str
    target: str
    pending_id: str
    what: str  # reminder | escalation | dm | passed (a critical one, gone through: counted)
    release_at: datetime


@dataclass(frozen=True)
class Released:
    """One held item, released into its target's summary."""

    key: str
    pending_id: str
    what: str
