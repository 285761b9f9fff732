"""A message's link from chat.getPermalink (the fake Slack's real answers): None when Slack
does not give one; asked ``strict``ly (a quiet-hours summary, a scheduled digest: sent once,
they wait for their links), a rate limit or a server error is raised instead — Slack may give
the link later — while a link Slack will never give is still None."""

from __future__ import annotations

import pytest

from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.slack_api.errors import SlackError
from kandev_slack.slack_api.gateway import Message, SlackGateway
from kandev_slack.slack_api.web_client import make_web_client

CHANNEL = "C0QUESTION"


def test_a_link_slack_may_give_later_is_raised_only_when_strict(fake_slack: FakeSlack) -> None:
    gateway = SlackGateway(make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url))
    ts = gateway.post_notice(CHANNEL, Message(text="a card", blocks=[]))
    fake_slack.faults.rate_limit("chat.getPermalink", retry_after=3, times=2)
    assert gateway.permalink(CHANNEL, ts) is None  # the listing shows where it is instead
    with pytest.raises(SlackError) as limited:
        gateway.permalink(CHANNEL, ts, strict=True)
    assert limited.value.rate_limited and limited.value.retry_after == 3
    assert str(gateway.permalink(CHANNEL, ts, strict=True)).startswith("https://")
    fake_slack.faults.server_error("chat.getPermalink", 503, times=3)  # past the client's retries
    with pytest.raises(SlackError):
        gateway.permalink(CHANNEL, ts, strict=True)
    # A message Slack does not have: no link ever, strict or not.
    assert gateway.permalink(CHANNEL, "1.000001", strict=True) is None
