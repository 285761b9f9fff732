"""Everything a scenario runs against: Kandev, its workspaces and their channels, fake Slacks,
and the bot as a process in its production configuration (HTTP mode under waitress, a SQLite
file, the default poll interval of 5 s unless a scenario says otherwise)."""

from __future__ import annotations

import compileall
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

import kandev_slack
from bench.kandev import DirectBundles, WaitingPool
from kandev_slack.kits.fakeslack import FakeSlack
from tests.kit.harness import BotProcess, KandevServer, bot_env

DEFAULT_POLL_INTERVAL = "5"


def compile_bot() -> bool:
    """The bot's modules compiled to bytecode beforehand, as an installed package has them
    (pip compiles what it installs; an editable install writes them at its first start):
    with none, every bot process compiles the ~230 modules it imports (0.2 s of CPU per
    start here), so that replicas started at once, or a restarted bot, measure a compiler
    that production does not run. Where ``PYTHONDONTWRITEBYTECODE`` is set, nothing else
    writes them. False when they could not all be written (the bot then compiles them)."""
    return bool(compileall.compile_dir(Path(kandev_slack.__file__).parent, quiet=1))


@dataclass(frozen=True)
class Route:
    workspace_id: str
    workspace_name: str
    channel: str


class World:
    def __init__(self, kandev: KandevServer, work_dir: Path, channels: int) -> None:
        #: Whether the bot's bytecode was written before any bot started (:func:`compile_bot`).
        self.compiled = compile_bot()
        self.kandev = kandev
        self.work_dir = work_dir
        self.routes = [self._route(n) for n in range(1, channels + 1)]
        self.routing_file = work_dir / "routing.toml"
        self.routing_file.write_text(
            "".join(
                f'[[route]]\nworkspace = "{r.workspace_name}"\nchannel = "{r.channel}"\n\n'
                for r in self.routes
            )
        )
        self._fakes: list[FakeSlack] = []
        self._bots: list[BotProcess] = []
        self._waiting: WaitingPool | None = None

    def _route(self, n: int) -> Route:
        name = f"bench-{n:02d}"
        return Route(self.kandev.create_workspace(name), name, f"C0BENCH{n:02d}")

    @property
    def workspace_ids(self) -> list[str]:
        return [r.workspace_id for r in self.routes]

    @property
    def waiting(self) -> WaitingPool:
        """The run's waiting bundles, spread over the channels' workspaces (made on demand,
        kept until Kandev stops: only the last scenarios use it)."""
        if self._waiting is None:
            # two sessions made at once: Kandev serialises them, more only adds contention
            self._waiting = WaitingPool(DirectBundles(self.kandev, workers=2), self.workspace_ids)
        return self._waiting

    def fake_slack(self) -> FakeSlack:
        """A started fake Slack that knows every bench channel."""
        fake = FakeSlack().start()
        for route in self.routes:
            fake.add_channel(route.channel, route.workspace_name)
        self._fakes.append(fake)
        return fake

    def bot(
        self,
        fake: FakeSlack,
        name: str,
        *,
        db: Path | None = None,
        url: str | None = None,
        mode: str = "http",
        **env: str,
    ) -> BotProcess:
        """A bot process (not started) posting to ``fake``, on its own SQLite file (``db``, by
        default ``<name>.db``) or on the database at ``url``: HTTP mode (waitress) or
        ``mode="socket"`` (Socket Mode, with /healthz on METRICS_PORT)."""
        database = url or f"sqlite:///{db or self.work_dir / f'{name}.db'}"
        overrides = {
            "KANDEV_POLL_INTERVAL": DEFAULT_POLL_INTERVAL,
            "KANDEV_SLACK_CONFIG": str(self.routing_file),
            **env,
        }
        settings = bot_env(fake, self.kandev, database, mode=mode, **overrides)
        if mode == "socket":  # no Slack requests over HTTP: PORT serves only /healthz
            settings.setdefault("METRICS_PORT", settings["PORT"])
        bot = BotProcess(settings, mode=mode, log_path=self.work_dir / f"{name}.log")
        self._bots.append(bot)
        return bot

    def close(self) -> None:
        for bot in self._bots:
            with contextlib.suppress(Exception):
                bot.stop()
        for fake in self._fakes:
            with contextlib.suppress(Exception):
                fake.stop()


def wait_synced(bot: BotProcess, timeout: float = 30.0) -> None:
    """Until the bot reports a completed sync with Kandev (its first poll is done)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError, ValueError):
            _status, report = bot.health()
            if report.get("last_sync_age_s") is not None:
                return
        time.sleep(0.1)
    raise TimeoutError(f"the bot did not sync within {timeout:.0f}s:\n{bot.logs()[-3000:]}")
