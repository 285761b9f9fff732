"""KANDEV_LIST_PAGE_SIZE: how many bundles one page of /kandev-questions shows."""

from __future__ import annotations

import pytest

from kandev_slack.config.settings import ConfigError, load_settings
from kandev_slack.surfaces.listing import MAX_PAGE_SIZE
from kandev_slack.surfaces.listing import MAX_PAGE_SIZE as MAX_LIST_PAGE_SIZE

BASE = {
    "SLACK_BOT_TOKEN": "xoxb-1-2-abc",
    "SLACK_SIGNING_SECRET": "0123456789abcdef",
    "KANDEV_SLACK_CHANNEL": "C0QUESTION",
}


def test_default_and_explicit_page_size() -> None:
    assert load_settings(BASE).kandev_list_page_size == 10
    assert load_settings({**BASE, "KANDEV_LIST_PAGE_SIZE": " 2 "}).kandev_list_page_size == 2
    assert MAX_LIST_PAGE_SIZE <= MAX_PAGE_SIZE  # every allowed size fits in one message


@pytest.mark.parametrize("value", ["0", "21", "ten", "-1", "2.5"])
def test_a_bad_page_size_is_named(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({**BASE, "KANDEV_LIST_PAGE_SIZE": value})
    assert caught.value.problems == [
        f"KANDEV_LIST_PAGE_SIZE must be a whole number from 1 to 20 (got '{value}')"
    ]
