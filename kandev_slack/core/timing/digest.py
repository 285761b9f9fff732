"""The digest's time of day (pure): ``09:00`` on weekdays, in a time zone.

A digest is due for a *local date* once the wall-clock time ``at`` of that date has come in the
zone. The store keeps one row per (target, local date) claimed atomically, so whatever the
clock does (a daylight-saving change, a restart, several replicas) a date gets at most one
digest, and a replica checking late still sends that date's (never skipping it): a date's
digest stays due from its time until the next date's, across its midnight, so a round that
first looks after midnight (a 23:45 digest, a 30-minute poll) still sends it.

- the spring gap: ``02:30`` does not exist that day → the digest is due at the first valid
  instant after it (the instant the clocks jump);
- the autumn fold: ``01:30`` happens twice → the first one (fold 0), and only once, since the
  local date is claimed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: ``HH:MM``, 24-hour, two digits each.
TIME_OF_DAY = re.compile(r"^([01][0-9]|2[0-3]):([0-5][0-9])$")
#: Monday … Friday (``date.weekday()``).
WEEKDAYS = frozenset(range(5))
#: The zone used when Slack does not say a person's.
DEFAULT_TZ = "UTC"


def parse_time_of_day(value: str) -> time | None:
    """``09:00`` → 09:00; None for anything else (``9``, ``25:00``, ``9:00``, ``tomorrow``)."""
    match = TIME_OF_DAY.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    return time(int(match.group(1)), int(match.group(2)))


def format_time_of_day(at: time) -> str:
    return f"{at.hour:02d}:{at.minute:02d}"


def zone(name: str | None) -> ZoneInfo | None:
    """The IANA zone ``name`` names, or None when it is not one."""
    if not name or not isinstance(name, str):
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _exists(local: datetime, tz: ZoneInfo) -> bool:
    """Whether the naive wall-clock time ``local`` happens in ``tz`` (not in a spring gap)."""
    there = local.replace(tzinfo=tz)
    return there.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == local


def send_instant(day: date, at: time, tz: ZoneInfo) -> datetime:
    """The instant (UTC) the digest of local date ``day`` is due: ``at`` on that day in ``tz``;
    in a spring gap, the first valid instant after (when the clocks jump); in an autumn fold,
    the first of the two."""
    local = datetime.combine(day, at)
    if _exists(local, tz):
        return local.replace(tzinfo=tz, fold=0).astimezone(UTC)
    # In the gap: fold=1 reads it with the offset after the jump (an instant before the jump),
    # fold=0 with the one before (an instant after it); the jump lies between.
    lo = int(local.replace(tzinfo=tz, fold=1).astimezone(UTC).timestamp())
    hi = int(local.replace(tzinfo=tz, fold=0).astimezone(UTC).timestamp())
    if lo > hi:
        lo, hi = hi, lo
    before = datetime.fromtimestamp(lo, UTC).astimezone(tz).utcoffset()
    while hi - lo > 1:  # the first second with the new offset
        mid = (lo + hi) // 2
        if datetime.fromtimestamp(mid, UTC).astimezone(tz).utcoffset() == before:
            lo = mid
        else:
            hi = mid
    return datetime.fromtimestamp(hi, UTC)


def due_date(
    now: datetime,
    at: time,
    tz: ZoneInfo,
    *,
    days: frozenset[int] = WEEKDAYS,
    since: datetime | None = None,
) -> date | None:
    """The local date whose digest is due at ``now`` (aware), or None: the date whose time
    (see :func:`send_instant`) came last — today's once it has come, else yesterday's —,
    provided that date is one of ``days`` and its time is not before ``since`` (the setting's
    change: a digest set at 10:00 for 09:00 starts tomorrow). A date's digest is thus due from
    its time until the next date's, never only until its midnight: a round polling at 23:59:30
    and next at 00:00:30 still sends a 23:59:45 digest. Whether it was sent already is the
    store's to say (a row per target and local date)."""
    day = now.astimezone(tz).date()
    instant = send_instant(day, at, tz)
    if now < instant:  # today's has not come: yesterday's is the last that did
        day -= timedelta(days=1)
        instant = send_instant(day, at, tz)
    if day.weekday() not in days or (since is not None and instant < since):
        return None
    return day


def next_send(
    now: datetime,
    at: time,
    tz: ZoneInfo,
    *,
    days: frozenset[int] = WEEKDAYS,
    sent: date | None = None,
) -> datetime:
    """The next instant (UTC) a digest will be due after ``now``; ``sent``: the local date
    whose digest went out already (it is skipped)."""
    today = now.astimezone(tz).date()
    for offset in range(0, 9):
        day = today + timedelta(days=offset)
        if day.weekday() not in days or day == sent:
            continue
        instant = send_instant(day, at, tz)
        if instant >= now:
            return instant
    raise ValueError("no digest day within a week")  # ``days`` is never empty


# ---- what a digest shows and what its command answers (the use-case decides, kandev_slack/
# usecases/followups/digests.py; the surface words it, kandev_slack/surfaces/digest.py) ----

#: At most this many rows are listed in a digest (the rest are counted): one block each (a
#: row is one item, or the identical items waiting in one channel).
MAX_DIGEST_ITEMS = 20

Scope = Literal["person", "channel"]
#: Renders a digest: (scope, the items shown — each with its card and permalink —, how many
#: wait in all, now) → the message's ``text`` and ``blocks`` (kandev_slack/surfaces/digest.py).
Render = Callable[[Scope, Sequence[Any], int, datetime], dict[str, Any]]


AnswerKind = Literal["bad", "off", "not_set", "setting", "set", "sent", "nothing", "unavailable"]


@dataclass(frozen=True)
class DigestAnswer:
    """What ``/kandev-questions digest …`` did (worded by kandev_slack/surfaces/digest.py):
    ``bad`` (``typed`` is no time), ``off`` / ``not_set`` (stopped / there was none),
    ``setting`` (shown: ``at``, ``tz``), ``set`` (``at``, ``tz``, ``next_at``), ``sent``
    (``count`` items), ``nothing`` (nothing waits), ``unavailable`` (Kandev cannot say)."""

    kind: AnswerKind
    at: str = ""
    tz: str = ""
    next_at: datetime | None = None
    count: int = 0
    typed: str = ""
