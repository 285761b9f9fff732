"""Fixtures of the real processes (see tests/kit/harness/ and kandev_slack/kits/kandevkit/):
Kandev, and the bot.
Kandev starts only for tests that ask for it.

- ``kandev_runtime`` (session): the installed runtime directory (npm, cached under .cache/).
- ``kandev`` (session): a running Kandev without auth, shared by every test.
- ``kandev_auth`` (session): a running Kandev with auth on; its PAT is ``kandev_auth.token``.
- ``kandev_people`` (session): a ``Cast`` (see ``tests.kit.harness.Cast``): one Kandev with auth
  and the Needs-you inbox on, whose harness admin is the bot (``cast.bot``, its PAT the bot's
  token), and the people ``ana`` (collaborator on the default workspace), ``ben`` (viewer on
  it), ``cat`` (in no workspace), ``dan`` (owns ``cast.dan_ws``, which the bot cannot see; ana
  collaborates there), ``eve`` (owns ``cast.eve_ws``, the bot a viewer, ana a collaborator);
  ``cast.people`` makes more and acts as them. ``people_seed`` (function) seeds there
  (``people_seed.by(cast.dan)(…, workspace_id=cast.dan_ws)`` as a person) and deletes its tasks
  after the test; ``people_app_factory`` / ``people_bot_factory``: the bot on it.
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
    Cast,
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
    {
        "kandev_runtime",
        "kandev",
        "kandev_auth",
        "kandev_inbox",
        "kandev_people",
        "kandev_factory",
        "seed",
    }
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


@pytest.fixture(scope="session")
def kandev_people(kandev_factory: Callable[..., KandevServer]) -> Cast:
    """Kandev with auth and the Needs-you inbox on, and its people (see the module's doc)."""
    return Cast.build(kandev_factory(auth=True, features=["needs_you_inbox"]))


@pytest.fixture
def people_seed(kandev_people: Cast) -> Iterator[Seeder]:
    """Seeds on ``kandev_people``'s Kandev (as the bot; ``.by(person)`` as someone else) and
    deletes every task it seeded after the test."""
    kandev_people.server.start()  # a no-op unless an earlier test left it stopped
    seeder = Seeder(kandev_people.server)
    yield seeder
    seeder.cleanup()


@pytest.fixture
def seed(kandev: KandevServer) -> Iterator[Seeder]:
    kandev.start()  # a no-op unless an earlier test left the shared server stopped
    seeder = Seeder(kandev)
    yield seeder
    seeder.cleanup()


def _bots(fake_slack: FakeSlack, kandev: KandevServer, tmp_path: Path) -> Iterator[BotFactory]:
    """Bot processes on ``kandev``, stopped afterwards."""
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
def bot_factory(fake_slack: FakeSlack, kandev, tmp_path: Path) -> Iterator[BotFactory]:
    yield from _bots(fake_slack, kandev, tmp_path)


@pytest.fixture
def people_bot_factory(
    fake_slack: FakeSlack, kandev_people: Cast, tmp_path: Path
) -> Iterator[BotFactory]:
    """Like ``bot_factory``, on ``kandev_people``'s Kandev (the bot's token: the harness's PAT)."""
    yield from _bots(fake_slack, kandev_people.server, tmp_path)


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
def people_app_factory(
    fake_slack: FakeSlack, kandev_people: Cast, tmp_path: Path
) -> Iterator[AppFactory]:
    """Like ``app_factory``, on ``kandev_people``'s Kandev (the bot's token: the harness's PAT)."""
    yield from _apps(fake_slack, kandev_people.server, tmp_path)


@pytest.fixture
def inbox_seed(kandev_inbox: KandevServer) -> Iterator[Seeder]:
    seeder = Seeder(kandev_inbox)
    yield seeder
    seeder.cleanup()


@pytest.fixture
def app(app_factory: AppFactory) -> InProcessBot:
    """The bot in this process, HTTP mode, the default configuration (as ``bot``)."""
    return app_factory()
