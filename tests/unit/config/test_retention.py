"""RETENTION_DAYS: how long resolved cards, audit entries and Home viewers are kept."""

from __future__ import annotations

import pytest

from kandev_slack.config.settings import ConfigError, load_settings
from tests.unit.config.test_settings import good_env


def test_retention_defaults_to_ninety_days() -> None:
    assert load_settings(good_env()).retention_days == 90
    assert load_settings(good_env(RETENTION_DAYS=" 7 ")).retention_days == 7


@pytest.mark.parametrize("value", ["0", "-3", "a week", "1.5", "36501"])
def test_a_bad_retention_is_named_with_what_is_allowed(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(good_env(RETENTION_DAYS=value))
    [problem] = caught.value.problems
    assert problem.startswith(
        f"RETENTION_DAYS must be a whole number of days from 1 to 36500 (got '{value}')"
    ), problem
