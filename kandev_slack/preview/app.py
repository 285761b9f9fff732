"""``kandev-slack preview``: the bot as in production (``kandev_slack.app.build``, HTTP mode)
against the
one fake Slack (``fakeslack``), and a page on 127.0.0.1 that shows that Slack and acts in it.

The bot gets an environment of its own: the fake's token and signing secret, its Web API URL,
a routing file (the preview's, or the team's), a SQLite file in a private directory, and the
Kandev settings (``KANDEV_URL``…). With ``with_kandev`` a local Kandev is started from the npm
runtime (``kandevkit``) and scripted agents ask their questions
(``kandev_slack.preview.scenario``)."""

from __future__ import annotations

import contextlib
import logging
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kandev_slack.inproc import InProcessBot
from kandev_slack.kits.fakeslack import FakeSlack, SlackDriver, SlackUser, Workspace
from kandev_slack.kits.kandevkit import KandevServer, ensure_runtime, free_port
from kandev_slack.ops.redaction import url_password
from kandev_slack.preview import scenario
from kandev_slack.preview.actions import ActionError, Actions
from kandev_slack.preview.going_on import AgentGoingOn
from kandev_slack.preview.guard import HOST
from kandev_slack.preview.mrkdwn import plain_to_html
from kandev_slack.preview.page import Snapshot, state_version
from kandev_slack.preview.reach import KandevWatch
from kandev_slack.preview.server import PreviewHttpServer
from kandev_slack.preview.workspace import PreviewWorkspace, own_workspace, team_workspace

log = logging.getLogger("kandev_slack.preview")
T = TypeVar("T")
DEFAULT_PORT = 3100
#: Where the bot looks for Kandev when ``KANDEV_URL`` is not set (``kandev_slack.config.settings``).
DEFAULT_KANDEV_URL = "http://localhost:38429"
#: What the preview passes on to the bot from its own environment, when set.
PASSED_ON = (
    "KANDEV_URL",
    "KANDEV_TOKEN",
    "KANDEV_PUBLIC_URL",
    "KANDEV_POLL_INTERVAL",
    "KANDEV_HINTS",
    "KANDEV_LIST_PAGE_SIZE",
    "LOG_LEVEL",
    "LOG_FORMAT",
)


@dataclass(frozen=True)
class PreviewOptions:
    port: int = DEFAULT_PORT
    with_kandev: bool = False
    #: Reminders and an escalation in the preview's own routing (off: cards stay as posted).
    follow_ups: bool = True
    #: Ask the scripted questions when a local Kandev is started.
    scripted: bool = True
    #: The local Kandev's HTTP port (its other ports follow it), else a free block is chosen.
    kandev_port: int | None = None


class Preview:
    """``start()`` → the page at :attr:`url`; ``stop()`` stops everything it started."""

    def __init__(self, env: Mapping[str, str], options: PreviewOptions | None = None) -> None:
        self.env = dict(env)
        self.options = options or PreviewOptions()
        self.work_dir = Path(tempfile.mkdtemp(prefix="kandev-slack-preview-"))
        self.fake = FakeSlack(own_identity())
        self.kandev: KandevServer | None = None
        self.bot: InProcessBot | None = None
        self.http: PreviewHttpServer | None = None
        self.workspace: PreviewWorkspace | None = None
        self.actions: Actions | None = None
        self.watch: KandevWatch | None = None
        self.going_on: AgentGoingOn | None = None
        self._script: threading.Thread | None = None
        self._stopping = threading.Event()
        self._stops: list[Callable[[], object]] = []

    @property
    def url(self) -> str:
        if self.http is None:
            raise RuntimeError("the preview is not started")
        return f"http://{HOST}:{self.http.port}/"

    def start(self) -> Preview:
        try:
            # The page's port first: a busy one is said before a Kandev is started.
            self.http = self._on_stop(
                PreviewHttpServer(self.options.port, self.state, self.act), self._stop_http
            )
            if self.options.with_kandev:  # then its ports (taken ones are said before all else)
                self.kandev = KandevServer(ensure_runtime(), base_port=self.options.kandev_port)
                self._on_stop(self.kandev, self.kandev.close).start()
                if self.options.scripted:  # before the bot reads a name
                    scenario.name_all(self.kandev)
            self.workspace = self._workspace()
            self.workspace.fill(self.fake)
            self._on_stop(self.fake, self.fake.stop).start()
            self.bot = InProcessBot(self.bot_env())
            self._on_stop(self.bot, self.bot.stop).start()
            driver = SlackDriver.over_http(self.fake, self.bot.events_url)
            self.actions = Actions(self.fake, driver)
            self.watch = KandevWatch(self.kandev_url, self.fake.state.changed)
            self._on_stop(self.watch, self.watch.stop).start()
            assert self.bot.bot is not None
            self.going_on = AgentGoingOn(
                self.fake,
                self.bot.bot.store.cards,
                self.bot.bot.kandev,
                self._channel_ids,
                self.fake.state.changed,
            )
            self._on_stop(self.going_on, self.going_on.stop).start()
            self.http.serve_in_thread()
            if self.kandev is not None and self.options.scripted:
                self._script = threading.Thread(
                    target=scenario.ask_all,
                    args=(self.kandev,),
                    kwargs={"stopping": self._stopping},
                    name="scripted-agents",
                )
                self._script.daemon = True
                self._script.start()
        except BaseException:
            self.stop()
            raise
        return self

    def secret_values(self) -> list[str]:
        """What must never be shown (the preview's logs and what it prints): the Kandev token
        and ``KANDEV_URL``'s password, as ``run`` redacts them, and this run's own secrets."""
        ws = self.fake.workspace
        found = [self.env.get("KANDEV_TOKEN", ""), ws.bot_token, ws.signing_secret]
        found.append(url_password(self.env.get("KANDEV_URL", "")) or "")
        if self.http is not None:
            found.append(self.http.token)
        return [secret for secret in found if secret]

    def _on_stop(self, part: T, stop: Callable[[], object]) -> T:
        """``part``, to be stopped by ``stop`` (the parts stop in the reverse order)."""
        self._stops.append(stop)
        return part

    def _stop_http(self) -> None:
        assert self.http is not None
        if self.http.serving:
            self.http.shutdown()
        self.http.server_close()

    def _channel_ids(self) -> list[str]:
        """The channels the cards may be in: the route channels and the people's DMs."""
        assert self.workspace is not None
        people = ["D" + user.id[1:] for user in self.workspace.users]
        return [c.id for c in self.workspace.channels] + people

    @property
    def kandev_url(self) -> str:
        """The Kandev the bot talks to."""
        return self.bot_env().get("KANDEV_URL") or DEFAULT_KANDEV_URL

    def _workspace(self) -> PreviewWorkspace:
        team_file = self.env.get("KANDEV_SLACK_CONFIG")
        if team_file:
            return team_workspace(Path(team_file), self.env.get("KANDEV_SLACK_CHANNEL"))
        return own_workspace(self.work_dir, follow_ups=self.options.follow_ups)

    def bot_env(self) -> dict[str, str]:
        """The bot's whole environment (nothing else of this process' reaches it)."""
        assert self.workspace is not None
        ws = self.fake.workspace
        env = {k: self.env[k] for k in PASSED_ON if self.env.get(k)}
        if self.kandev is not None:
            env["KANDEV_URL"] = self.kandev.base_url
            env.pop("KANDEV_TOKEN", None)
        env.update(
            {
                "SLACK_BOT_TOKEN": ws.bot_token,
                "SLACK_SIGNING_SECRET": ws.signing_secret,
                "SLACK_API_URL": self.fake.api_url,
                "KANDEV_SLACK_CONFIG": str(self.workspace.routing_file),
                "DATABASE_URL": f"sqlite:///{self.work_dir / 'preview.db'}",
                "PORT": str(free_port()),
            }
        )
        if self.env.get("KANDEV_SLACK_CHANNEL") and self.env.get("KANDEV_SLACK_CONFIG"):
            env["KANDEV_SLACK_CHANNEL"] = self.env["KANDEV_SLACK_CHANNEL"]
        return env

    def stop(self) -> None:
        """Stop every part started, the last first (safe to call twice)."""
        self._stopping.set()
        while self._stops:
            self._stops.pop()()
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> Preview:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what the page asks -----------------------------------------------------------------
    def person(self, user_id: str) -> SlackUser:
        assert self.workspace is not None
        for user in self.workspace.users:
            if user.id == user_id:
                return user
        return self.workspace.users[0]

    def state(self, user_id: str, since: str, wait: float) -> dict[str, Any]:
        assert self.workspace is not None and self.actions is not None
        actions = self.actions
        went_on = self.going_on.said if self.going_on is not None else {}

        def version() -> str:
            said = sorted(dict(went_on).items())
            return state_version(self.fake, actions.changes, self.kandev_problem, said)

        if since and wait > 0:
            with contextlib.suppress(TimeoutError):
                self.fake.wait_for(lambda: version() != since, timeout=wait)
        current = version()
        user = self.person(user_id)
        snapshot = Snapshot(
            self.fake,
            user,
            self.workspace.channels,
            self.workspace.names,
            actions.memory(user.id),
            went_on=dict(went_on),
        )
        rendered = snapshot.render(fresh=not since)
        problem = self.kandev_problem
        rendered.update(
            kandev=plain_to_html(problem) if problem else "",
            version=current,
            user=user.id,
            users=[
                {"id": u.id, "name": u.real_name or u.name, "role": self.workspace.roles.get(u.id)}
                for u in self.workspace.users
            ],
        )
        return rendered

    @property
    def kandev_problem(self) -> str | None:
        """What the page says about Kandev (it cannot be reached), if anything."""
        return self.watch.problem if self.watch is not None else None

    def act(self, user_id: str, request: dict[str, Any]) -> dict[str, Any]:
        assert self.actions is not None
        user = self.person(user_id)
        if user.id != user_id:
            raise ActionError(f"no preview user {user_id!r}")
        return self.actions.act(user, request)


def own_identity() -> Workspace:
    """The fake workspace the preview's bot talks to, with a bot token and a signing secret
    new for each run (a fixed one would let anything on this machine that knows it sign
    requests to the bot's port, or call the fake's Web API as the bot)."""
    return Workspace(
        team_name="Preview",
        team_domain="preview",
        bot_token=f"xoxb-preview-{secrets.token_hex(16)}",
        signing_secret=secrets.token_hex(32),
    )
