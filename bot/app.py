"""`kandev-slack run`: build every part from the settings, start the workers, serve Slack.

The three steps are explicit: :func:`build` makes each component once and hands it to whoever
needs it (what two components share is its own small component), :meth:`Bot.start` starts the
background workers, :meth:`Bot.serve` answers Slack (Socket Mode or HTTP) until a signal.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from dataclasses import dataclass, field

from slack_bolt import App
from slack_sdk.errors import SlackApiError

from bot.admission import Admission
from bot.answers import AnswerService
from bot.config import Mode, Settings
from bot.conversation import ConversationService
from bot.exitcodes import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from bot.health import Health
from bot.home import HomeService
from bot.kandev.client import KandevClient
from bot.kandev.errors import KandevError, KandevUnavailable
from bot.kandev.hints import KandevHints
from bot.leases import InFlight, LeaseKeeper
from bot.listing import ListingService
from bot.logs import install_redaction
from bot.past import PastAnswers
from bot.permissions import Permissions
from bot.publisher import Publisher
from bot.recovery import Recovery
from bot.signals import Signal
from bot.slack.app import build_bolt_app
from bot.slack.http_server import make_wsgi_app, serve, stop_server
from bot.slack.lanes import Lane
from bot.slack.services import Services
from bot.slack.socket_mode import GuardedSocketModeHandler
from bot.slack_api.gateway import SlackGateway, make_web_client
from bot.slack_api.notify import Notifier
from bot.store import Store
from bot.sync import SyncEngine
from bot.tasks import TaskDirectory
from bot.waiting import Permalinks, WaitingQueue
from bot.workspace_check import WorkspaceCheck

log = logging.getLogger("bot.app")

#: Answers on their way to Kandev at once, and how many more may wait (then: "busy").
ANSWERING_WORKERS, ANSWERING_WAITING = 8, 8
#: Listings and Home tabs built at once, and how many more may wait.
READING_WORKERS, READING_WAITING = 4, 8


def _secret(value) -> str | None:
    return value.get_secret_value() if value is not None else None


class StartupError(Exception):
    """The bot cannot start: ``exit_code`` and the lines to print."""

    def __init__(self, exit_code: int, *lines: str) -> None:
        super().__init__("; ".join(lines))
        self.exit_code = exit_code
        self.lines = lines


@dataclass
class Bot:
    settings: Settings
    mode: Mode
    health: Health
    store: Store
    kandev: KandevClient
    bolt: App
    hints: KandevHints
    workers: list[threading.Thread]
    lanes: list[Lane]
    wakeups: list[Signal]
    stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        """Start the background workers and (unless turned off) Kandev's push hints."""
        for worker in self.workers:
            worker.start()
        if self.settings.kandev_hints:
            self.hints.start()
        else:
            log.info(
                "push hints off (KANDEV_HINTS): polling every %ss",
                self.settings.kandev_poll_interval,
            )

    def serve(self) -> None:
        """Answer Slack until SIGTERM / SIGINT, then stop everything."""
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        try:
            if self.mode == "socket":
                self._serve_socket_mode()
            else:
                self._serve_http()
        finally:
            self.close()

    def close(self) -> None:
        self.stop.set()
        for wakeup in self.wakeups:
            wakeup.raise_()
        self.hints.stop()
        for worker in self.workers:
            worker.join(timeout=5)
        for lane in self.lanes:
            lane.shutdown()
        self.kandev.close()
        self.store.close()

    def _on_signal(self, signum, _frame) -> None:
        log.info("signal %s: stopping", signum)
        self.stop.set()

    def _serve_socket_mode(self) -> None:
        handler = GuardedSocketModeHandler(
            self.bolt, app_token=_secret(self.settings.slack_app_token)
        )
        handler.connect()
        log.info("kandev-slack running in Socket Mode")
        self.stop.wait()
        handler.close()

    def _serve_http(self) -> None:
        secret = _secret(self.settings.slack_signing_secret)
        server = serve(
            make_wsgi_app(self.bolt, self.health, signing_secret=secret), self.settings.port
        )
        thread = threading.Thread(target=server.run, name="http", daemon=True)
        thread.start()
        log.info("kandev-slack running in HTTP mode on port %s", self.settings.port)
        self.stop.wait()
        stop_server(server, thread)


def _check_routing(check: WorkspaceCheck, health: Health) -> None:
    """Check the routing file's workspaces now if Kandev answers (a mistake stops the bot)."""
    try:
        problems = check.check()
    except KandevUnavailable as exc:
        log.warning("Kandev is not reachable at start-up (%s); will keep trying", exc)
        health.failure("kandev", "unreachable", exc)
        health.problem("routing", "workspaces not validated yet (Kandev unreachable)")
        return
    except KandevError as exc:
        raise StartupError(EXIT_FAILED, f"kandev-slack: {exc}") from exc
    if problems:
        lines = [f"  {problem}" for problem in problems]
        raise StartupError(EXIT_CONFIG, "kandev-slack: configuration problems:", *lines)


def build(settings: Settings, mode: Mode) -> Bot:
    """Make every component once, wired explicitly. Raises StartupError."""
    health = Health()
    store = Store(settings.database_url, retention_days=settings.retention_days)
    health.watch("database", lambda: None if store.ping() else "does not answer")
    kandev = KandevClient(
        settings.kandev_url, _secret(settings.kandev_token), retry_attempts=3, retry_max_wait=2.0
    )
    routing = settings.routing
    workspace_check = WorkspaceCheck(routing, kandev, health)
    _check_routing(workspace_check, health)

    web = make_web_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)
    slack = SlackGateway(web)
    public_url = settings.kandev_public_url
    card_changes, sync_wakeup = Signal("card changed"), Signal("look at Kandev")
    publisher = Publisher(store, slack, kandev_url=public_url, health=health, changes=card_changes)
    tasks = TaskDirectory(kandev)
    permissions = Permissions(routing, slack)
    permalinks = Permalinks(slack)
    queue = WaitingQueue(kandev, store, routing, tasks, permalinks, permissions)
    past = PastAnswers(store, routing)
    notifier = Notifier(slack)
    in_flight = InFlight()  # answers on their way to Kandev (leases renewed while alive)
    answers = AnswerService(kandev, store, publisher, in_flight)
    sync = SyncEngine(
        kandev,
        store,
        routing,
        tasks,
        publisher,
        health,
        sync_wakeup,
        poll_interval=settings.kandev_poll_interval,
        past=past,
    )
    recovery = Recovery(
        kandev,
        store,
        answers,
        permissions,
        notifier,
        in_flight,
        interval_s=settings.kandev_poll_interval,
    )
    home = HomeService(queue, store, slack, card_changes, kandev_url=public_url)
    listing = ListingService(
        queue, kandev, kandev_url=public_url, page_size=settings.kandev_list_page_size
    )
    answering = Lane("answering", workers=ANSWERING_WORKERS, waiting=ANSWERING_WAITING)
    reading = Lane("reading", workers=READING_WORKERS, waiting=READING_WAITING)
    services = Services(
        admission=Admission(store, queue, permissions),
        answers=answers,
        listing=listing,
        home=home,
        notifier=notifier,
        kandev_public_url=public_url,
        answering=answering,
        reading=reading,
        conversation=ConversationService(kandev, past, routing, permalinks),
    )
    try:
        bolt = build_bolt_app(
            web,
            services,
            signing_secret=_secret(settings.slack_signing_secret),
            socket_mode=mode == "socket",
        )
    except SlackApiError as exc:
        error = exc.response.get("error")
        raise StartupError(
            EXIT_FAILED, f"kandev-slack: Slack refused SLACK_BOT_TOKEN ({error})"
        ) from exc

    hints = KandevHints(
        settings.kandev_url,
        _secret(settings.kandev_token),
        on_new_pending=sync_wakeup.raise_,
        on_resolved=sync_wakeup.raise_,
        on_connected=sync_wakeup.raise_,
    )
    bot = Bot(
        settings=settings,
        mode=mode,
        health=health,
        store=store,
        kandev=kandev,
        bolt=bolt,
        hints=hints,
        workers=[],
        lanes=[answering, reading],
        wakeups=[sync_wakeup, card_changes],
    )
    leases = LeaseKeeper(store, publisher.worker_id, in_flight)
    poll = settings.kandev_poll_interval
    bot.workers = [
        _worker("publisher", publisher.run, bot.stop),
        _worker("sync", sync.run, bot.stop),
        _worker("recovery", recovery.run, bot.stop),
        _worker("leases", leases.run, bot.stop),
        _worker("home", home.run, bot.stop),
    ]
    if not workspace_check.done:
        bot.workers.append(_worker("routing-check", workspace_check.run, bot.stop, poll))
    return bot


def _worker(name: str, target, *args: object) -> threading.Thread:
    return threading.Thread(target=target, args=args, name=name, daemon=True)


def main_run(settings: Settings, mode: Mode) -> int:
    install_redaction(settings.secret_values())
    try:
        bot = build(settings, mode)
    except StartupError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return exc.exit_code
    bot.start()
    bot.serve()
    return EXIT_OK
