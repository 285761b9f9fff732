"""pytest plugin: `fake_slack` and `slack_driver`.

Use from a top-level conftest with `pytest_plugins = ["kandev_slack.kits.fakeslack.fixtures"]`
(or import the two fixtures into a conftest).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

import pytest

from kandev_slack.kits.fakeslack.config import SlackUser
from kandev_slack.kits.fakeslack.driver import SlackDriver
from kandev_slack.kits.fakeslack.transport.server import FakeSlack

DriverFactory = Callable[..., SlackDriver]


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    """A started FakeSlack. The test fails at teardown if the app sent a payload that breaks a
    Block Kit rule; tests that expect violations consume them with `take_violations()`."""
    fake = FakeSlack().start()
    try:
        yield fake
    finally:
        fake.stop()
    leftover = fake.take_violations()
    if leftover:
        listed = "\n".join(f"  {v}" for v in leftover)
        pytest.fail(f"the app sent payloads Slack would reject or warn about:\n{listed}")


@pytest.fixture
def slack_driver(fake_slack: FakeSlack) -> DriverFactory:
    """Factory: `slack_driver(url)` drives a bot over HTTP (its request URL),
    `slack_driver(transport="socket")` over the fake's Socket Mode server."""

    def make(
        url: str | None = None,
        *,
        transport: Literal["http", "socket"] = "http",
        signing_secret: str | None = None,
        user: SlackUser | None = None,
    ) -> SlackDriver:
        extra = {"user": user} if user is not None else {}
        if transport == "socket":
            return SlackDriver.over_socket_mode(fake_slack, **extra)
        if url is None:
            raise ValueError("an HTTP driver needs the bot's request URL")
        return SlackDriver.over_http(fake_slack, url, signing_secret, **extra)

    return make
