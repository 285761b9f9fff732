"""The claim's timing ("I'm on it", kandev_slack/core/claims.py): a claim pauses the card's
follow-up
age while it holds, the pause ends with it, and claims that are over stay counted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.core.claims import Claim, followup_age, new_claim

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_a_card_nobody_is_on_ages_as_the_clock_does() -> None:
    assert followup_age(T0, at(12), 0.0, None) == 12 * 60


def test_a_claim_stops_the_age_while_it_holds_and_it_resumes_after() -> None:
    claim = new_claim("U0ANA", at(10), 30 * 60)  # 10:10 to 10:40
    assert claim.until == at(40)
    assert followup_age(T0, at(10), 0.0, claim) == 10 * 60
    assert followup_age(T0, at(25), 0.0, claim) == 10 * 60  # paused
    assert followup_age(T0, at(40), 0.0, claim) == 10 * 60  # ran out just now
    assert followup_age(T0, at(45), 0.0, claim) == 15 * 60  # resumed where it stopped


def test_released_early_only_the_held_time_is_paused() -> None:
    claim = new_claim("U0ANA", at(10), 30 * 60)
    paused = claim.held_s(at(15))  # released at 10:15
    assert paused == 5 * 60
    assert followup_age(T0, at(20), paused, None) == 15 * 60


def test_claims_that_are_over_add_up() -> None:
    second = new_claim("U0BOB", at(30), 600)  # after a first claim that paused 5 min
    assert followup_age(T0, at(35), 300.0, second) == (35 - 5 - 5) * 60


def test_holds_until_its_end_only() -> None:
    claim = Claim(user_id="U0ANA", since=at(0), until=at(30))
    assert claim.holds(at(29.99)) and not claim.holds(at(30)) and not claim.holds(at(31))


@given(
    start=st.floats(0, 600),
    length=st.floats(1, 600),
    look=st.floats(0, 2000),
    paused=st.floats(0, 100),
)
def test_the_follow_up_age_never_runs_ahead_of_the_clock_nor_backwards(
    start: float, length: float, look: float, paused: float
) -> None:
    claim = new_claim("U0ANA", at(start), length * 60)
    now = at(look)
    age = followup_age(T0, now, paused, claim)
    assert 0.0 <= age <= (now - T0).total_seconds() + 1e-6
    later = followup_age(T0, now + timedelta(minutes=1), paused, claim)
    assert later >= age - 1e-6
