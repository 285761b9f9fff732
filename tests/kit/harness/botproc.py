"""The bot as a real process (`kandev-slack run`), as a user would start it, and the
environment that points it at a fake Slack and a Kandev."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from kandev_slack.kits.kandevkit import free_port

if TYPE_CHECKING:
    from kandev_slack.kits.fakeslack import FakeSlack
    from kandev_slack.kits.kandevkit import KandevServer

CONSOLE_SCRIPT = Path(sys.executable).parent / "kandev-slack"
#: The channel the bot posts question cards to (KANDEV_SLACK_CHANNEL).
CHANNEL = "C0QUESTION"


def bot_env(
    fake: FakeSlack, kandev: KandevServer, db_url: str, *, mode: str = "http", **overrides: str
) -> dict[str, str]:
    """The bot's environment: this process' own minus any SLACK_/KANDEV_/database/port
    setting, then ``fake``, ``kandev``, ``db_url``, a free port and ``overrides``."""
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
    if kandev.token:
        env["KANDEV_TOKEN"] = kandev.token
    if mode == "socket":
        env["SLACK_APP_TOKEN"] = ws.app_token
    env.update(overrides)
    return env


class BotProcess:
    """Start/stop/kill/restart the bot with a given environment; logs go to a file."""

    def __init__(
        self,
        env: dict[str, str],
        *,
        mode: str,
        log_path: Path,
        command: list[str] | None = None,
        cwd: Path | None = None,
    ):
        """``command``: what starts it instead of this checkout's ``kandev-slack`` (e.g. an
        older release's ``python -m kandev_slack``), run in ``cwd``."""
        self.env = env
        self.command = command or [str(CONSOLE_SCRIPT)]
        self.cwd = cwd
        self.mode = mode
        self.log_path = log_path
        self.port = int(env["PORT"])
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/healthz"

    def start(self, *, wait: bool = True, timeout: float = 30.0) -> BotProcess:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        log = self.log_path.open("a")
        log.write(f"\n===== start #{self.starts} ({self.mode}) =====\n")
        log.flush()
        self.proc = subprocess.Popen(
            [*self.command, "run", f"--{self.mode}"],
            env=self.env,
            cwd=self.cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        if wait:
            self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        marker = "running in Socket Mode" if self.mode == "socket" else None
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(
                    f"the bot exited with {self.proc.returncode}:\n{self.logs()[-4000:]}"
                )
            if marker is not None:
                if marker in self.logs().rsplit("===== start", 1)[-1]:
                    return
            else:
                try:
                    httpx.get(self.health_url, timeout=1.0)
                    return
                except httpx.HTTPError:
                    pass
            time.sleep(0.1)
        raise TimeoutError(f"the bot did not become ready:\n{self.logs()[-4000:]}")

    def health(self) -> tuple[int, dict]:
        r = httpx.get(self.health_url, timeout=5.0)
        return r.status_code, r.json()

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL if it does not exit in time."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return self.kill()

    def kill(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return None
        os.killpg(self.proc.pid, signal.SIGKILL)
        return self.proc.wait(10)

    def restart(self, **kwargs) -> BotProcess:
        self.stop()
        return self.start(**kwargs)

    def logs(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
