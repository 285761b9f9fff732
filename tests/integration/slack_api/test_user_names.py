"""A person's name from users.info (the fake Slack's real response shape), remembered for the
directory's time: two mentions of one person in a minute are one call; someone Slack does not
know has no name, and the reply shows their id."""

from __future__ import annotations

from kandev_slack.kits.fakeslack import ALICE, BOB, FakeSlack
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.slack_api.web_client import make_web_client


def test_names_are_read_once_and_unknown_people_have_none(fake_slack: FakeSlack) -> None:
    gateway = SlackGateway(make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url))
    notifier = Notifier(gateway)
    assert notifier.user_name(BOB.id) == BOB.name  # the profile's display name
    assert notifier.user_name(BOB.id) == BOB.name
    assert notifier.user_name(ALICE.id) == ALICE.name
    assert [c.params.get("user") for c in fake_slack.calls("users.info")] == [BOB.id, ALICE.id]
    assert notifier.user_name("U0NOBODY99") is None


def test_a_name_and_an_organisation_are_one_read_of_the_person(fake_slack: FakeSlack) -> None:
    """The two ask users.info about the same person: one call, and each gets its own answer
    whichever asked first (they once shared a cache entry of two different shapes)."""
    gateway = SlackGateway(make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url))
    assert gateway.user_name(BOB.id) == BOB.name
    assert gateway.of_own_organisation(BOB.id) is True
    assert gateway.of_own_organisation(ALICE.id) is True
    assert gateway.user_name(ALICE.id) == ALICE.name
    assert [c.params.get("user") for c in fake_slack.calls("users.info")] == [BOB.id, ALICE.id]
