"""Quiet hours' arithmetic (kandev_slack/core/timing/quiet.py): ranges, time zones, DST."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_slack.core.timing.quiet import (
    QuietError,
    QuietHours,
    parse_range,
    quiet_hours,
    quiet_until,
    release_at,
    windows,
    zone,
)
from tests.unit.properties import examples

ZONES = (
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Sydney",  # southern hemisphere: DST the other way round
    "Australia/Lord_Howe",  # a 30-minute DST shift
    "America/Santiago",
    "Asia/Kolkata",  # no DST, half-hour offset
)
# Instants around the DST changes of 2026 (and any others in the years around).
INSTANTS = st.datetimes(
    min_value=datetime(2025, 1, 1), max_value=datetime(2027, 12, 31), timezones=st.just(UTC)
)
CLOCKS = st.builds(time, st.integers(0, 23), st.sampled_from([0, 1, 15, 29, 30, 45, 59]))


@st.composite
def ranges(draw: st.DrawFn) -> QuietHours:
    start, end = draw(CLOCKS), draw(CLOCKS)
    if start == end:
        end = time((end.hour + 1) % 24, end.minute)
    return QuietHours(start, end, draw(st.sampled_from(ZONES)))


def berlin(y: int, mo: int, d: int, h: int, mi: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=zone("Europe/Berlin"))


def test_parse_range() -> None:
    assert parse_range("19:00-08:00") == (time(19), time(8))
    assert parse_range(" 9:30 - 17:45:10 ") == (time(9, 30), time(17, 45, 10))
    for bad, problem in [
        ("25:00-08:00", "clock"),
        ("19:60-08:00", "clock"),
        ("19:00", "format"),
        ("7pm-8am", "format"),
        ("", "format"),
        ("08:00-08:00", "empty"),
    ]:
        with pytest.raises(QuietError) as caught:
            parse_range(bad)
        assert caught.value.problem == problem


def test_bad_zone_names_itself() -> None:
    for bad in ("Europe/Berlinn", "", " UTC", "../etc/passwd"):
        with pytest.raises(QuietError) as caught:
            quiet_hours("19:00-08:00", bad)
        assert caught.value.problem == "tz"
        assert caught.value.value == bad


def test_across_midnight() -> None:
    hours = quiet_hours("19:00-08:00", "Europe/Berlin")
    assert quiet_until(hours, berlin(2026, 6, 1, 18, 59)) is None
    assert quiet_until(hours, berlin(2026, 6, 1, 19)) == berlin(2026, 6, 2, 8)
    assert quiet_until(hours, berlin(2026, 6, 2, 7, 59)) == berlin(2026, 6, 2, 8)
    assert quiet_until(hours, berlin(2026, 6, 2, 8)) is None


def test_night_of_spring_forward_ends_at_local_eight() -> None:
    hours = quiet_hours("19:00-08:00", "Europe/Berlin")
    end = quiet_until(hours, berlin(2026, 3, 28, 23))
    assert end == berlin(2026, 3, 29, 8)  # 06:00 UTC, the night one hour shorter
    assert end is not None and end.astimezone(UTC).hour == 6


def test_night_of_fall_back_ends_at_local_eight() -> None:
    hours = quiet_hours("19:00-08:00", "Europe/Berlin")
    end = quiet_until(hours, berlin(2026, 10, 24, 23))
    assert end is not None and end.astimezone(UTC) == datetime(2026, 10, 25, 7, tzinfo=UTC)


def test_end_in_the_repeated_hour_is_its_first_occurrence() -> None:
    hours = quiet_hours("22:00-02:30", "Europe/Berlin")
    end = quiet_until(hours, berlin(2026, 10, 24, 23))
    assert end == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 summer time
    # The repeated 02:00-02:30 (winter time) is after the window: not quiet again.
    assert quiet_until(hours, datetime(2026, 10, 25, 1, 15, tzinfo=UTC)) is None


def test_release_at_is_the_latest_end() -> None:
    person = quiet_hours("22:00-07:00", "UTC")
    route = quiet_hours("19:00-08:00", "UTC")
    now = datetime(2026, 6, 1, 23, tzinfo=UTC)
    assert release_at(now, person, route) == datetime(2026, 6, 2, 8, tzinfo=UTC)
    assert release_at(now, None, None) is None
    assert release_at(datetime(2026, 6, 1, 12, tzinfo=UTC), person, route) is None


@settings(max_examples=examples(500), deadline=None)
@given(ranges(), INSTANTS)
def test_one_window_one_end(hours: QuietHours, now: datetime) -> None:
    """Every instant of a window answers the same end (one summary per window, never two),
    the end is in the future and at most a day and a DST shift away, and it is not quiet in
    the same window again at its end."""
    end = quiet_until(hours, now)
    if end is None:
        return
    assert now < end <= now + timedelta(hours=26)
    span = (end - now).total_seconds()
    for fraction in (0.0, 0.25, 0.5, 0.9999):
        assert quiet_until(hours, now + timedelta(seconds=span * fraction)) == end
    after = quiet_until(hours, end)
    assert after is None or after > end


@settings(max_examples=examples(500), deadline=None)
@given(ranges(), INSTANTS)
def test_quiet_matches_the_local_clock_away_from_dst(hours: QuietHours, now: datetime) -> None:
    """Away from a DST change, quiet is exactly "the local clock is inside the range"."""
    tz = zone(hours.tz)
    near = [now + timedelta(hours=h) for h in range(-27, 28, 3)]
    if len({t.astimezone(tz).utcoffset() for t in near}) != 1:
        return  # a DST change nearby: the other property covers it
    clock = now.astimezone(tz).time()
    if hours.crosses_midnight:
        inside = clock >= hours.start or clock < hours.end
    else:
        inside = hours.start <= clock < hours.end
    assert (quiet_until(hours, now) is not None) == inside


@settings(max_examples=examples(300), deadline=None)
@given(ranges(), INSTANTS)
def test_no_night_lost_across_dst(hours: QuietHours, now: datetime) -> None:
    """Every local day's window is quiet from its start (none lost), and no local day has two
    ends (none doubled)."""
    found = windows(hours, now)
    assert len(found) >= 3  # only a range inside a DST gap can lose its (empty) window
    ends = set()
    for start, end in found:
        until = quiet_until(hours, start)
        assert until is not None and until >= end - timedelta(hours=1)
        ends.add(until)
    tz = zone(hours.tz)
    days = [e.astimezone(tz).date() for e in ends]
    assert len(days) == len(set(days))
