"""Fixtures of the real processes (see tests/kit/harness/ and kandev_slack/kits/kandevkit/):
Kandev, and the bot.
Kandev starts only for tests that ask for it.

- ``kandev_runtime`` (session): the installed runtime directory (npm, cached under .cache/).
- ``kandev`` (session): a running Kandev without auth, shared by every test.
- ``kandev_auth`` (session): a running Kandev with auth on; its PAT is ``kandev_auth.token``.
- ``kandev_factory`` (session): ``kandev_factory(auth=False)`` starts a private server, e.g. for
  tests that stop or restart it; all are closed at the end of the session.
- ``seed`` (function): seeds bundles on ``kandev`` and deletes its tasks after the test.
- ``bot_factory`` (function): ``bot_factory(mode="http"|"socket", start=True, db_url=None,
  **env_overrides)`` -> a ``BotProcess`` on the fake Slack and ``kandev``; all are stopped after
  the test. ``bot``: one in HTTP mode with the default configuration.
- ``app_factory`` (function): ``app_factory(db_url=None, **env_overrides)`` -> an ``InProcessBot``
  (kandev_slack.app.build() in this process, HTTP mode) on the same environment; for tests where the
  process itself (restart, crash, signals, replicas, Socket Mode, the CLI) is not what is tested.
  ``app``: one with the default configuration.

Tests using any of these get the ``kandev`` marker automatically. Every test also gets the marker
of its folder: tests/unit -> ``unit``, tests/integration -> ``integration``, tests/e2e -> ``e2e``
(``pytest -m unit`` is the inner loop; see CONTRIBUTING.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import settings

from kandev_slack.kits.fakeslack import FakeSlack
from tests.kit.harness import (
    BotProcess,
    InProcessBot,
    KandevServer,
    Seeder,
    bot_env,
    ensure_runtime,
)

# The fake Slack fixtures (`fake_slack`, `slack_driver`) for every test directory, and the
# reliability summary (loaded here so that pytest-xdist's controller, which collects nothing,
# has it too).
pytest_plugins = ["kandev_slack.kits.fakeslack.fixtures", "tests.e2e.reliability.summary"]

# Hypothesis: ``unit`` (default) bounds every property for the inner loop (tests/unit/properties.py
# caps the explicit numbers too); ``full`` runs each property as deep as it asks (CI, nightly).
settings.register_profile("unit", max_examples=5)
settings.register_profile("full", max_examples=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "unit"))

BotFactory = Callable[..., BotProcess]
AppFactory = Callable[..., InProcessBot]
KANDEV_FIXTURES = frozenset(
    {"kandev_runtime", "kandev", "kandev_auth", "kandev_inbox", "kandev_factory", "seed"}
)
TESTS = Path(__file__).parent
FOLDER_MARKERS = ("unit", "integration", "e2e")


def folder_marker(path: Path) -> str | None:
    """The marker of the test folder ``path`` lies in (tests/<folder>/...), if any."""
    try:
        folder = path.relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        return None
    return folder if folder in FOLDER_MARKERS else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = folder_marker(item.path)
        if marker is not None:
            item.add_marker(marker)
        if KANDEV_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.kandev)


@pytest.fixture(scope="session")
def kandev_runtime() -> Path:
    return ensure_runtime()


@pytest.fixture(scope="session")
def kandev_factory(kandev_runtime: Path) -> Iterator[Callable[..., KandevServer]]:
    servers: list[KandevServer] = []

    def start(*, auth: bool = False, features: Sequence[str] = ()) -> KandevServer:
        server = KandevServer(kandev_runtime, auth=auth, features=features)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def kandev(kandev_factory: Callable[..., KandevServer]) -> KandevServer:
    return kandev_factory()


@pytest.fixture(scope="session")
def kandev_auth(kandev_factory: Callable[..., KandevServer]) -> KandevServer:
    return kandev_factory(auth=True)


@pytest.fixture(scope="session")
def kandev_inbox(kandev_factory: Callable[..., KandevServer]) -> KandevServer:
    """A Kandev with the Needs-you inbox on (``KANDEV_FEATURES_NEEDS_YOU_INBOX=true``)."""
    return kandev_factory(features=["needs_you_inbox"])


@pytest.fixture
def seed(kandev: KandevServer) -> Iterator[Seeder]:
    kandev.start()  # a no-op unless an earlier test left the shared server stopped
    seeder = Seeder(kandev)
    yield seeder
    seeder.cleanup()


@pytest.fixture
def bot_factory(fake_slack: FakeSlack, kandev, tmp_path: Path) -> Iterator[BotFactory]:
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
    return bot_factory()


def _apps(fake_slack: FakeSlack, kandev: KandevServer, tmp_path: Path) -> Iterator[AppFactory]:
    """In-process bots (HTTP mode) on ``kandev``, stopped afterwards."""
    started: list[InProcessBot] = []

    def make(*, db_url: str | None = None, **overrides: str) -> InProcessBot:
        url = db_url or f"sqlite:///{tmp_path / 'bot.db'}"
        app = InProcessBot(bot_env(fake_slack, kandev, url, mode="http", **overrides))
        started.append(app)
        return app.start()

    yield make
    for app in started:
        app.stop()


@pytest.fixture
def app_factory(fake_slack: FakeSlack, kandev, tmp_path: Path) -> Iterator[AppFactory]:
    yield from _apps(fake_slack, kandev, tmp_path)


@pytest.fixture
def inbox_app_factory(fake_slack: FakeSlack, kandev_inbox, tmp_path: Path) -> Iterator[AppFactory]:
    """Like ``app_factory``, on the Kandev with the Needs-you inbox on."""
    yield from _apps(fake_slack, kandev_inbox, tmp_path)


@pytest.fixture
def inbox_seed(kandev_inbox: KandevServer) -> Iterator[Seeder]:
    seeder = Seeder(kandev_inbox)
    yield seeder
    seeder.cleanup()


@pytest.fixture
def app(app_factory: AppFactory) -> InProcessBot:
    """The bot in this process, HTTP mode, the default configuration (as ``bot``)."""
    return app_factory()
