"""Quiet hours' rules (kandev_slack/usecases/followups/quiet.py): what waits, what goes
through, the command, and the summary's words."""

from __future__ import annotations

from datetime import UTC, datetime

from kandev_slack.cards.views.quiet import gather_message, quiet_bad_message, summary_message
from kandev_slack.core.timing.quiet import MAX_LISTED, Listed, QuietHours, Released, quiet_hours
from kandev_slack.usecases.followups.quiet import (
    QuietCommand,
    QuietRound,
    QuietService,
    parse_quiet,
    summary_write,
)

NIGHT = datetime(2026, 6, 1, 23, tzinfo=UTC)
DAY = datetime(2026, 6, 1, 12, tzinfo=UTC)
ROUTE = quiet_hours("19:00-08:00", "UTC")
ANA = "U0ANA00001"


def test_nothing_waits_outside_quiet_hours() -> None:
    assert QuietRound(DAY).hold("k", "C0X", "p", "reminder", ROUTE, None) == (False, [])
    assert QuietRound(NIGHT).hold("k", "C0X", "p", "reminder", None, None) == (False, [])


def test_the_route_s_quiet_hours_hold_until_they_end() -> None:
    waits, rows = QuietRound(NIGHT).hold("remind:p:1", "C0X", "p", "reminder", ROUTE, "high")
    assert waits
    assert [(r.key, r.target, r.what, r.release_at) for r in rows] == [
        ("held:remind:p:1", "C0X", "reminder", datetime(2026, 6, 2, 8, tzinfo=UTC))
    ]


def test_a_critical_item_goes_through_and_is_counted() -> None:
    waits, rows = QuietRound(NIGHT).hold("dm:p:U", ANA, "p", "dm", ROUTE, "Critical")
    assert not waits
    assert [r.what for r in rows] == ["passed"]


def test_a_person_s_own_quiet_hours_hold_what_goes_to_them_only() -> None:
    people = {ANA: quiet_hours("22:00-09:30", "UTC")}
    quiet = QuietRound(NIGHT, people)
    waits, rows = quiet.hold("dm:p:U", ANA, "p", "dm", None, None)
    assert waits and rows[0].release_at == datetime(2026, 6, 2, 9, 30, tzinfo=UTC)
    # The later end of the route's and the person's counts.
    waits, rows = quiet.hold("dm:p:U", ANA, "p", "dm", ROUTE, None)
    assert rows[0].release_at == datetime(2026, 6, 2, 9, 30, tzinfo=UTC)
    # A channel is not a person: the person's quiet hours do not apply to it.
    assert quiet.hold("k", "C0X", "p", "reminder", None, None) == (False, [])


def test_the_command() -> None:
    assert parse_quiet("quiet") == QuietCommand("show")
    assert parse_quiet("  QUIET  off ") == QuietCommand("off")
    assert parse_quiet("quiet 19:00-08:00") == QuietCommand("set", "19:00-08:00")
    assert parse_quiet("quietly") is None
    assert parse_quiet("label:quiet") is None


class _People:
    def __init__(self) -> None:
        self.hours: dict[str, QuietHours] = {}

    def quiet_of(self, user_id: str) -> QuietHours | None:
        return self.hours.get(user_id)

    def quiet_set(self, user_id: str, hours: QuietHours) -> None:
        self.hours[user_id] = hours

    def quiet_clear(self, user_id: str) -> bool:
        return self.hours.pop(user_id, None) is not None


class _Zones:
    def __init__(self, tz: str | None) -> None:
        self.tz = tz

    def user_tz(self, user_id: str) -> str | None:
        return self.tz


def test_the_service_sets_in_the_person_s_time_zone_and_bad_input_changes_nothing() -> None:
    people = _People()
    service = QuietService(people, _Zones("America/New_York"))
    assert service.reply(QuietCommand("set", "25:00-08:00"), ANA).outcome == "bad"
    assert people.hours == {}
    reply = service.reply(QuietCommand("set", "19:00-08:00"), ANA)
    assert (reply.outcome, reply.hours, reply.tz) == ("set", "19:00-08:00", "America/New_York")
    assert service.reply(QuietCommand("show"), ANA).hours == "19:00-08:00"
    assert service.reply(QuietCommand("off"), ANA).had
    assert not service.reply(QuietCommand("off"), ANA).had
    unknown = QuietService(people, _Zones("Mars/Olympus")).reply(
        QuietCommand("set", "1:00-2:00"), ANA
    )
    assert (unknown.outcome, unknown.problem, unknown.hours) == ("bad", "tz", "Mars/Olympus")
    assert QuietService(people, _Zones(None)).reply(
        QuietCommand("set", "1:00-2:00"), ANA
    ).outcome == ("no_tz")


def test_one_summary_per_release_names_each_card_once() -> None:
    released = [Released("held:a", "p1", "reminder"), Released("held:b", "p1", "reminder")]
    kind, key, payload = summary_write("C0X", released + [Released("held:c", "p2", "dm")])
    assert (kind, key) == ("summary", "summary:C0X:held:a")
    assert payload == {"target": "C0X", "pending_ids": ["p1", "p2"]}


def test_the_summary_s_words_stay_within_slack_s_limits() -> None:
    listed = [Listed(f"Question {n} " + "x" * 500, f"https://s/{n}", n == 30) for n in range(40)]
    text, blocks = summary_message(listed, 40, 1)
    assert text == "🌙 While you were away: 40 items wait — 1 critical"
    lines = blocks[1]["text"]["text"].split("\n")
    assert len(lines) == MAX_LISTED and lines[0].startswith("• 🔴 <https://s/30|")
    assert all(len(b["text"]["text"]) <= 3000 for b in blocks if "text" in b)
    assert "and 20 more" in blocks[2]["elements"][0]["text"]
    assert summary_message([Listed("Q", None, False)], 1, 0)[0].endswith("1 item waits")
    assert gather_message(7, 2)[0] == "🧵 7 agents need you — 2 critical"
    assert "does not exist" in quiet_bad_message("clock", "25:00-08:00")


def test_calm_dms_rule() -> None:
    from kandev_slack.core.timing.calm import ALONE, calm_choice

    assert [calm_choice(False, n) for n in range(ALONE)] == ["alone"] * ALONE
    assert calm_choice(False, ALONE) == "open"  # the 4th opens the gathering DM
    assert calm_choice(False, ALONE + 5) == "open"
    assert calm_choice(True, 0) == "join"  # later ones join it while it is open
