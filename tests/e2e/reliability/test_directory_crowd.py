"""A crowd meets a cold directory cache: fifty people click cards of a route limited to a user
group at once, and the bot asks Slack for the group's members once, not once per person (Slack
allows usergroups.users.list about 20 times a minute: the rest would be refused, and a refused
lookup counts as "may not answer")."""

from __future__ import annotations

import threading

import pytest

from kandev_slack.kits.fakeslack import FakeSlack, ScriptedResponse
from kandev_slack.slack_api.gateway import SlackError, SlackGateway
from kandev_slack.slack_api.web_client import make_web_client

CROWD = 50
GROUP = "S0CROWD"
MEMBERS = ["U0CAROL", "U0DAVE"]


def _crowd(fake_slack: FakeSlack, look_up) -> list[object]:
    """``look_up()`` from CROWD threads at once; what each got (a value or an exception)."""
    start = threading.Barrier(CROWD)
    got: list[object] = [None] * CROWD

    def person(n: int) -> None:
        start.wait()
        try:
            got[n] = look_up()
        except Exception as exc:  # noqa: BLE001 - compared below
            got[n] = exc

    threads = [threading.Thread(target=person, args=(n,)) for n in range(CROWD)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return got


@pytest.fixture
def gateway(fake_slack: FakeSlack) -> SlackGateway:
    return SlackGateway(make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url))


def test_a_crowd_missing_the_cache_makes_one_lookup(fake_slack: FakeSlack, gateway) -> None:
    fake_slack.set_usergroup(GROUP, MEMBERS)
    fake_slack.faults.slow("usergroups.users.list", 0.5, times=None)  # all of them miss at once

    got = _crowd(fake_slack, lambda: gateway.group_members(GROUP))

    assert got == [frozenset(MEMBERS)] * CROWD
    assert len(fake_slack.calls("usergroups.users.list")) == 1


def test_a_failed_lookup_fails_the_crowd_waiting_for_it_and_is_tried_again(
    fake_slack: FakeSlack, gateway
) -> None:
    fake_slack.set_usergroup(GROUP, MEMBERS)
    refused = ScriptedResponse(
        status=429,
        body={"ok": False, "error": "ratelimited"},
        headers={"Retry-After": "1"},
        delay=0.5,  # all of them miss at once
    )
    fake_slack.faults.script("usergroups.users.list", refused)

    got = _crowd(fake_slack, lambda: gateway.group_members(GROUP))

    assert all(isinstance(g, SlackError) and g.rate_limited for g in got), got
    assert len(fake_slack.calls("usergroups.users.list")) == 1
    assert gateway.group_members(GROUP) == frozenset(MEMBERS)  # not cached: read again
    assert len(fake_slack.calls("usergroups.users.list")) == 2
