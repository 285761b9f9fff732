"""SlackGateway's membership port against the fake Slack over HTTP: a channel's members over
several pages, a person's organisation against the app's, errors raised (never a guess), and a
bounded cache."""

from __future__ import annotations

import pytest

from kandev_slack.kits.fakeslack import ALICE, FakeSlack, SlackUser
from kandev_slack.slack_api import gateway as gateway_module
from kandev_slack.slack_api.errors import SlackError
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.slack_api.web_client import make_web_client

CHANNEL = "C0QUESTION"


@pytest.fixture
def slack(fake_slack: FakeSlack) -> SlackGateway:
    return SlackGateway(make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url))


def test_channel_members_are_read_over_every_page(slack: SlackGateway, fake_slack) -> None:
    crowd = [f"U{n:09d}" for n in range(2_500)]  # three pages of 1,000
    fake_slack.set_channel_members(CHANNEL, [*crowd, ALICE.id])

    assert slack.is_channel_member(CHANNEL, ALICE.id)
    assert slack.is_channel_member(CHANNEL, crowd[1_500])
    assert not slack.is_channel_member(CHANNEL, "U0NOTHERE1")
    assert len(fake_slack.calls("conversations.members")) == 3  # once, then cached


def test_a_channel_slack_hides_raises(slack: SlackGateway, fake_slack) -> None:
    fake_slack.add_channel("C0SECRET", "secret", is_private=True)
    fake_slack.set_channel_members("C0SECRET", [ALICE.id])  # the bot is not in it
    with pytest.raises(SlackError) as raised:
        slack.is_channel_member("C0SECRET", ALICE.id)
    assert raised.value.error == "channel_not_found"


def test_a_person_s_organisation_against_the_app_s(slack: SlackGateway, fake_slack) -> None:
    fake_slack.add_user(SlackUser(id="U0PARTNER1", name="pat", team_id="T0PARTNER1"))
    fake_slack.add_user(SlackUser(id="U0GUEST001", name="gus", is_restricted=True))

    assert slack.of_own_organisation(ALICE.id)
    assert slack.of_own_organisation("U0GUEST001")  # a guest of this workspace
    assert not slack.of_own_organisation("U0PARTNER1")
    assert len(fake_slack.calls("auth.test")) == 1  # the app's own team is read once
    with pytest.raises(SlackError) as raised:
        slack.of_own_organisation("U0NOBODY01")
    assert raised.value.error == "user_not_found"


def test_the_directory_cache_is_bounded(
    slack: SlackGateway, fake_slack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gateway_module, "DIRECTORY_MAX_ENTRIES", 3)
    people = [SlackUser(id=f"U0PERSON{n:02d}", name=f"p{n}") for n in range(6)]
    for person in people:
        fake_slack.add_user(person)
        assert slack.of_own_organisation(person.id)
    assert len(slack._directory) == 3  # the newest three
    before = len(fake_slack.calls("users.info"))
    assert slack.of_own_organisation(people[-1].id)  # still cached
    assert slack.of_own_organisation(people[0].id)  # dropped: read again
    assert len(fake_slack.calls("users.info")) == before + 1


def test_someone_just_added_to_the_channel_is_not_refused_for_a_minute(
    slack: SlackGateway, fake_slack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every click asks who is in the card's channel: a "no" from a list read more than a
    moment ago is read again (a "yes" stays cached for the minute)."""
    monkeypatch.setattr(gateway_module, "MEMBER_MISS_TTL_S", 0.0)
    fake_slack.set_channel_members(CHANNEL, [ALICE.id])
    assert not slack.is_channel_member(CHANNEL, "U0NEWCOMER")
    fake_slack.set_channel_members(CHANNEL, [ALICE.id, "U0NEWCOMER"])

    assert slack.is_channel_member(CHANNEL, "U0NEWCOMER")
    calls = len(fake_slack.calls("conversations.members"))
    assert slack.is_channel_member(CHANNEL, ALICE.id)
    assert len(fake_slack.calls("conversations.members")) == calls  # a "yes" from the cache
