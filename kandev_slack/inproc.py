"""The bot in the caller's own process (the tests', the preview's): kandev_slack.app.build() on the
same environment a ``BotProcess`` gets (``bot_env``), its workers started and its HTTP endpoint
served on a thread, as
``kandev-slack run --http`` does. For tests where the process itself is not what is tested
(no restart, crash, signals, replicas, Socket Mode or CLI): same fake Slack, same real Kandev,
same requests over HTTP, a second or two less per test and no subprocess."""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

import httpx

from kandev_slack.app import Bot, build
from kandev_slack.config.settings import load_settings
from kandev_slack.slack.transport.http_server import (
    make_wsgi_app,
    serve,
    stop_accepting,
    stop_server,
)

READY_TIMEOUT_S = 30.0


class InProcessBot:
    """Start/stop the bot in-process (HTTP mode); the surface e2e tests use of ``BotProcess``:
    ``env``, ``events_url``, ``health_url``, ``health()``, ``logs()`` (what the ``bot`` loggers
    said at INFO and above while it ran), ``start()``, ``stop()``."""

    mode = "http"

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)
        self.port = int(self.env["PORT"])
        self.bot: Bot | None = None
        self._server: Any = (
            None  # a waitress server (kandev_slack.slack.transport.http_server.serve)
        )
        self._thread: threading.Thread | None = None
        self._log = io.StringIO()
        self._handler: logging.Handler | None = None
        self._level = logging.NOTSET

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/healthz"

    def start(self) -> InProcessBot:
        assert self.bot is None, "already running"
        self._capture_logs()
        settings = load_settings(self.env, mode="http")
        bot = build(settings, "http")
        bot.start()
        secret = settings.slack_signing_secret
        wsgi = make_wsgi_app(
            bot.bolt, bot.health, signing_secret=secret.get_secret_value() if secret else None
        )
        self._server = serve(wsgi, self.port, host="127.0.0.1")
        self._thread = threading.Thread(target=self._server.run, name="http", daemon=True)
        self._thread.start()
        self.bot = bot
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                httpx.get(self.health_url, timeout=1.0)
                return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise TimeoutError("the in-process bot did not answer on its port")

    def _capture_logs(self) -> None:
        logger = logging.getLogger("kandev_slack")
        self._handler = logging.StreamHandler(self._log)
        self._handler.setLevel(logging.INFO)
        self._handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
        self._level = logger.level
        logger.setLevel(logging.INFO)
        logger.addHandler(self._handler)

    def logs(self) -> str:
        return self._log.getvalue()

    def health(self) -> tuple[int, dict]:
        r = httpx.get(self.health_url, timeout=5.0)
        return r.status_code, r.json()

    def stop(self) -> None:
        """Stop serving, then hand over and close as SIGTERM would (idempotent)."""
        if self.bot is None:
            return
        self.bot.stop.set()
        if self._server is not None:
            stop_accepting(self._server, 1.0)
            stop_server(self._server, self._thread)
        self.bot.close()
        self.bot, self._server, self._thread = None, None, None
        if self._handler is not None:
            logger = logging.getLogger("kandev_slack")
            logger.removeHandler(self._handler)
            logger.setLevel(self._level)
            self._handler = None
