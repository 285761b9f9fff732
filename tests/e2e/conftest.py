"""End-to-end fixtures: real Kandev + fake Slack + the bot as a process."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.botproc import BotProcess, free_port
from tests.fakeslack.server import FakeSlack

CHANNEL = "C0QUESTION"
BotFactory = Callable[..., BotProcess]


def bot_env(
    fake: FakeSlack, kandev, db_url: str, *, mode: str = "http", **overrides: str
) -> dict[str, str]:
    ws = fake.workspace
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "KANDEV_", "DATABASE_URL", "PORT"))
    }
    env.update(
        {
            "SLACK_BOT_TOKEN": ws.bot_token,
            "SLACK_SIGNING_SECRET": ws.signing_secret,
            "SLACK_API_URL": fake.api_url,
            "KANDEV_URL": kandev.base_url,
            "KANDEV_PUBLIC_URL": "https://kandev.example.test",
            "KANDEV_SLACK_CHANNEL": CHANNEL,
            "KANDEV_POLL_INTERVAL": "2",
            "DATABASE_URL": db_url,
            "PORT": str(free_port()),
            "LOG_LEVEL": "INFO",
        }
    )
    if getattr(kandev, "token", None):
        env["KANDEV_TOKEN"] = kandev.token
    if mode == "socket":
        env["SLACK_APP_TOKEN"] = ws.app_token
    env.update(overrides)
    return env


@pytest.fixture
def bot_factory(fake_slack: FakeSlack, kandev, tmp_path: Path) -> Iterator[BotFactory]:
    """`bot_factory(mode="http"|"socket", start=True, **env_overrides)` -> BotProcess."""
    started: list[BotProcess] = []

    def make(
        *, mode: str = "http", start: bool = True, db_url: str | None = None, **overrides: str
    ) -> BotProcess:
        url = db_url or f"sqlite:///{tmp_path / 'bot.db'}"
        env = bot_env(fake_slack, kandev, url, mode=mode, **overrides)
        bot = BotProcess(env, mode=mode, log_path=tmp_path / f"bot-{len(started)}.log")
        started.append(bot)
        if start:
            bot.start()
        return bot

    yield make
    for bot in started:
        bot.stop()


@pytest.fixture
def bot(bot_factory: BotFactory) -> BotProcess:
    """The bot in HTTP mode with the default configuration."""
    return bot_factory()
