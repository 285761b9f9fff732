"""Which Socket Mode URLs the bot follows (kandev_slack/slack/transport/socket_link.py
``link_url_problem``)."""

from __future__ import annotations

import pytest

from kandev_slack.slack.transport.socket_link import link_url_problem

SLACK = "https://slack.com/api/"
FAKE = "http://127.0.0.1:8123/api/"


@pytest.mark.parametrize(
    ("url", "api_url"),
    [
        ("wss://wss-primary.slack.com/link/?ticket=t&app_id=A1", SLACK),
        ("wss://wss-backup.slack.com/link/?ticket=t", SLACK),
        ("wss://127.0.0.1:9/link/", FAKE),
        ("ws://127.0.0.1:9001/link/?ticket=t", FAKE),  # a local fake Slack, plain on both sides
    ],
)
def test_followed(url: str, api_url: str) -> None:
    assert link_url_problem(url, api_url) is None


@pytest.mark.parametrize(
    ("url", "api_url", "why"),
    [
        ("ws://wss-primary.slack.com/link/", SLACK, "plain ws:// while SLACK_API_URL is https://"),
        ("ws://evil.example:80/link/", FAKE, "plain ws:// to a host other than SLACK_API_URL's"),
        ("ws://localhost:9001/link/", FAKE, "plain ws:// to a host other than SLACK_API_URL's"),
        ("http://127.0.0.1:9/link/", FAKE, "http scheme, not wss://"),
        ("https://wss-primary.slack.com/", SLACK, "https scheme, not wss://"),
        ("wss:///link/", SLACK, "no host"),
        ("", SLACK, "no host"),
        ("ws://[::1/link", FAKE, "not a URL"),
    ],
)
def test_not_followed(url: str, api_url: str, why: str) -> None:
    assert link_url_problem(url, api_url) == why
