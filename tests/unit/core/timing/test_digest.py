"""The digest's time of day (kandev_slack/core/timing/digest.py): parsing, and the arithmetic across
daylight-saving changes — a weekday gets exactly one digest, at its wall-clock time (in a
spring gap, when the clocks jump), whatever the polling."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kandev_slack.core.timing.digest import (
    due_date,
    next_send,
    parse_time_of_day,
    send_instant,
    zone,
)
from tests.unit.properties import examples

ZONES = ("Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC", "Asia/Kolkata")
#: Days around DST changes of those zones (2025): Berlin's and New York's spring and autumn,
#: Lord Howe's half-hour shifts.
AROUND = (
    date(2025, 3, 30),  # Berlin: 02:00 → 03:00
    date(2025, 10, 26),  # Berlin: 03:00 → 02:00
    date(2025, 3, 9),  # New York: 02:00 → 03:00
    date(2025, 11, 2),  # New York: 02:00 → 01:00
    date(2025, 4, 6),  # Lord Howe: 02:00 → 01:30
    date(2025, 10, 5),  # Lord Howe: 02:00 → 02:30
)


@pytest.mark.parametrize("typed", ["09:00", "00:00", "23:59", " 07:30 "])
def test_times_of_day_are_read(typed: str) -> None:
    at = parse_time_of_day(typed)
    assert at is not None and f"{at.hour:02d}:{at.minute:02d}" == typed.strip()


@pytest.mark.parametrize("typed", ["25:00", "9", "9:00", "tomorrow", "24:00", "12:60", "", "0900"])
def test_anything_else_is_not_a_time(typed: str) -> None:
    assert parse_time_of_day(typed) is None


def test_zones_are_iana_names() -> None:
    assert zone("Europe/Berlin") is not None
    assert zone("Mars/Olympus") is None and zone("") is None and zone(None) is None


def test_the_spring_gap_sends_when_the_clocks_jump() -> None:
    berlin = zone("Europe/Berlin")
    assert berlin is not None
    # 02:30 does not exist on 2025-03-30 in Berlin: 03:00 CEST (01:00 UTC) is the first after
    assert send_instant(date(2025, 3, 30), time(2, 30), berlin) == datetime(
        2025, 3, 30, 1, 0, tzinfo=UTC
    )
    lord_howe = zone("Australia/Lord_Howe")
    assert lord_howe is not None
    at = send_instant(date(2025, 10, 5), time(2, 15), lord_howe).astimezone(lord_howe)
    assert (at.hour, at.minute) == (2, 30)


def test_the_autumn_fold_sends_at_the_first_one() -> None:
    ny = zone("America/New_York")
    assert ny is not None
    # 01:30 happens twice on 2025-11-02: the first is EDT (05:30 UTC)
    assert send_instant(date(2025, 11, 2), time(1, 30), ny) == datetime(
        2025, 11, 2, 5, 30, tzinfo=UTC
    )


def test_weekends_have_no_digest_and_a_new_setting_waits_for_the_next_day() -> None:
    utc = zone("UTC")
    assert utc is not None
    saturday = datetime(2025, 3, 29, 10, 0, tzinfo=UTC)
    assert due_date(saturday, time(9, 0), utc) is None
    monday = datetime(2025, 3, 31, 10, 0, tzinfo=UTC)
    assert due_date(monday, time(9, 0), utc) == date(2025, 3, 31)
    set_at_ten = monday - timedelta(minutes=1)
    assert due_date(monday, time(9, 0), utc, since=set_at_ten) is None
    assert next_send(saturday, time(9, 0), utc) == datetime(2025, 3, 31, 9, 0, tzinfo=UTC)
    assert next_send(monday, time(9, 0), utc, sent=date(2025, 3, 31)) == datetime(
        2025, 4, 1, 9, 0, tzinfo=UTC
    )


def test_a_digest_stays_due_past_its_midnight_until_the_next_dates_time() -> None:
    berlin = zone("Europe/Berlin")
    assert berlin is not None
    at = time(23, 31)  # Friday 2025-03-28 23:31 CET is 22:31 UTC
    friday = date(2025, 3, 28)
    # a minute before Friday's time, Thursday's is the last that came (sent by then)
    assert due_date(datetime(2025, 3, 28, 22, 30, tzinfo=UTC), at, berlin) == date(2025, 3, 27)
    # a round at 00:00 local Saturday is the first to see Friday's: it is still due
    assert due_date(datetime(2025, 3, 28, 23, 0, tzinfo=UTC), at, berlin) == friday
    assert due_date(datetime(2025, 3, 29, 21, 0, tzinfo=UTC), at, berlin) == friday
    # once Saturday's time has come, Saturday's is the last (none: a weekend) and so on to Monday
    assert due_date(datetime(2025, 3, 29, 22, 31, tzinfo=UTC), at, berlin) is None
    assert due_date(datetime(2025, 3, 31, 8, 0, tzinfo=UTC), at, berlin) is None
    # set after Friday's time: Friday's is not due past midnight either
    since = datetime(2025, 3, 28, 22, 40, tzinfo=UTC)
    assert due_date(datetime(2025, 3, 28, 23, 0, tzinfo=UTC), at, berlin, since=since) is None


def _sends(tz_name: str, at: time, start: date, days: int, step: timedelta) -> dict[date, int]:
    """Poll every ``step`` for ``days`` days from ``start`` (from noon UTC a day early), as the
    worker does, claiming each due local date once: how many digests each date got, and
    check each one went at or after its time (and within one step of it)."""
    tz = zone(tz_name)
    assert tz is not None
    claimed: dict[date, int] = {}
    now = datetime.combine(start - timedelta(days=1), time(12), tzinfo=UTC)
    end = now + timedelta(days=days + 2)
    # what was due before polling began counts as sent (as a claimed row would)
    first = due_date(now, at, tz)
    if first is not None:
        claimed[first] = 0
    while now < end:
        day = due_date(now, at, tz)
        if day is not None and day not in claimed:
            instant = send_instant(day, at, tz)
            assert instant <= now < instant + step + timedelta(seconds=1)
            local = instant.astimezone(tz)
            assert local.date() == day
            assert local.time().replace(tzinfo=None) >= at  # its time, or the jump after it
            claimed[day] = claimed.get(day, 0) + 1
        now += step
    return claimed


@settings(max_examples=examples(60), deadline=None)
@given(
    tz_name=st.sampled_from(ZONES),
    around=st.sampled_from(AROUND),
    hour=st.integers(0, 23),
    minute=st.sampled_from([0, 1, 15, 29, 30, 31, 45, 59]),
    step_minutes=st.sampled_from([1, 7, 30]),
)
# 23:31 polled every 30 minutes: no round falls in 23:31-23:59 local, so the first round after
# the digest's time is on the next local date, which must still send it (Friday before Berlin's
# spring-forward; found by the full profile)
@example(tz_name="Europe/Berlin", around=date(2025, 3, 30), hour=23, minute=31, step_minutes=30)
@example(tz_name="Australia/Lord_Howe", around=date(2025, 4, 6), hour=23, minute=59, step_minutes=7)
def test_every_weekday_gets_exactly_one_digest_across_dst(
    tz_name: str, around: date, hour: int, minute: int, step_minutes: int
) -> None:
    start = around - timedelta(days=2)
    claimed = _sends(tz_name, time(hour, minute), start, 5, timedelta(minutes=step_minutes))
    tz = zone(tz_name)
    assert tz is not None
    for offset in range(5):
        day = start + timedelta(days=offset)
        expected = 1 if day.weekday() < 5 else 0
        assert claimed.get(day, 0) == expected, (day, claimed)


@settings(max_examples=examples(60), deadline=None)
@given(
    tz_name=st.sampled_from(ZONES),
    around=st.sampled_from(AROUND),
    hour=st.integers(0, 23),
    minute=st.integers(0, 59),
    seconds=st.integers(0, 3 * 86400),
)
def test_next_send_is_the_next_due_instant(
    tz_name: str, around: date, hour: int, minute: int, seconds: int
) -> None:
    tz = zone(tz_name)
    assert tz is not None
    at = time(hour, minute)
    now = datetime.combine(around - timedelta(days=1), time(0), tzinfo=UTC) + timedelta(
        seconds=seconds
    )
    instant = next_send(now, at, tz)
    assert instant >= now
    day = instant.astimezone(tz).date()
    assert day.weekday() < 5 and send_instant(day, at, tz) == instant
    assert due_date(instant, at, tz) == day
