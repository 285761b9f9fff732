"""`kandev-slack run`: build every part from the settings, start the workers, serve Slack."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError

from bot.answers import AnswerService
from bot.config import Mode, Settings
from bot.health import Health
from bot.home import HomeService
from bot.kandev.client import KandevClient
from bot.kandev.errors import KandevError, KandevUnavailable
from bot.kandev.hints import KandevHints
from bot.leases import InFlight, LeaseKeeper
from bot.listing import ListingService, Permalinks
from bot.logs import install_redaction
from bot.publisher import Publisher
from bot.recovery import Recovery
from bot.routing import Routing
from bot.slack.app import build_bolt_app
from bot.slack.gateway import SlackGateway, make_web_client
from bot.slack.http_server import make_wsgi_app, serve, stop_server
from bot.slack.services import Services
from bot.slack.socket_mode import GuardedSocketModeHandler
from bot.store import Store
from bot.sync import SyncEngine

log = logging.getLogger("bot.app")

EXIT_CONFIG = 2
EXIT_FAILED = 1


def _secret(value) -> str | None:
    return value.get_secret_value() if value is not None else None


@dataclass
class RoutingCheck:
    """Route workspaces are checked against Kandev once it is reachable."""

    routing: Routing
    kandev: KandevClient
    health: Health
    done: bool = False

    def __call__(self) -> list[str]:
        if self.done:
            return []
        problems = self.routing.validate_workspaces(self.kandev.workspaces())
        self.done = True
        if problems:
            self.health.problem("routing", "; ".join(problems))
        else:
            self.health.clear("routing")
        return problems


def main_run(settings: Settings, mode: Mode) -> int:
    install_redaction(settings.secret_values())
    health = Health()
    stop = threading.Event()

    store = Store(settings.database_url, retention_days=settings.retention_days)
    kandev = KandevClient(
        settings.kandev_url, _secret(settings.kandev_token), retry_attempts=3, retry_max_wait=2.0
    )
    routing = settings.routing
    routing_check = RoutingCheck(routing, kandev, health)
    try:
        problems = routing_check()
    except KandevUnavailable as exc:
        log.warning("Kandev is not reachable at start-up (%s); will keep trying", exc)
        health.problem("kandev", f"unreachable: {exc}")
        health.problem("routing", "workspaces not validated yet (Kandev unreachable)")
    except KandevError as exc:
        print(f"kandev-slack: {exc}", file=sys.stderr)
        return EXIT_FAILED
    else:
        if problems:
            print("kandev-slack: configuration problems:", file=sys.stderr)
            for problem in problems:
                print(f"  {problem}", file=sys.stderr)
            return EXIT_CONFIG

    bot_token = settings.slack_bot_token.get_secret_value()
    web = make_web_client(bot_token, settings.slack_api_url)
    slack = SlackGateway(web)
    publisher = Publisher(store, slack, kandev_url=settings.kandev_public_url, health=health)
    in_flight = InFlight()  # answers on their way to Kandev (leases renewed while alive)

    def before_sync() -> None:
        routing_check()
        recovery.run_once()  # answers a crashed process left on their way to Kandev

    sync = SyncEngine(
        kandev,
        store,
        routing,
        publisher,
        health,
        poll_interval=settings.kandev_poll_interval,
        before_sync=before_sync,
    )
    listing = ListingService(
        kandev,
        store,
        routing,
        sync.task_info,
        Permalinks(slack.permalink),
        kandev_url=settings.kandev_public_url,
        page_size=settings.kandev_list_page_size,
    )
    home = HomeService(listing, store, slack, kandev_url=settings.kandev_public_url)
    publisher.on_card_changed = home.card_changed
    answers = AnswerService(
        kandev,
        store,
        routing,
        publisher,
        slack.group_members,
        find_bundle=listing.find_card,
        in_flight=in_flight,
    )
    recovery = Recovery(kandev, store, answers, slack, in_flight)
    leases = LeaseKeeper(store, publisher.worker_id, in_flight)
    services = Services(
        store=store,
        kandev=kandev,
        slack=slack,
        answers=answers,
        publisher=publisher,
        sync=sync,
        kandev_public_url=settings.kandev_public_url,
        listing=listing,
        home=home,
    )
    socket_mode = mode == "socket"
    try:
        bolt = build_bolt_app(
            web,
            services,
            signing_secret=_secret(settings.slack_signing_secret),
            socket_mode=socket_mode,
        )
    except SlackApiError as exc:
        print(
            f"kandev-slack: Slack refused SLACK_BOT_TOKEN ({exc.response.get('error')})",
            file=sys.stderr,
        )
        return EXIT_FAILED

    hints = KandevHints(
        settings.kandev_url,
        _secret(settings.kandev_token),
        on_new_pending=sync.wake,
        on_resolved=sync.wake,
        on_connected=sync.wake,
    )
    workers = [
        threading.Thread(target=publisher.run, args=(stop,), name="publisher", daemon=True),
        threading.Thread(target=sync.run, args=(stop,), name="sync", daemon=True),
        threading.Thread(target=leases.run, args=(stop,), name="leases", daemon=True),
        threading.Thread(target=home.run, args=(stop,), name="home", daemon=True),
    ]
    for worker in workers:
        worker.start()
    if settings.kandev_hints:
        hints.start()
    else:
        log.info("push hints off (KANDEV_HINTS): polling every %ss", settings.kandev_poll_interval)

    def _stop(signum, _frame) -> None:
        log.info("signal %s: stopping", signum)
        stop.set()
        sync.wake()
        publisher.wake()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    try:
        if socket_mode:
            handler = GuardedSocketModeHandler(bolt, app_token=_secret(settings.slack_app_token))
            handler.connect()
            log.info("kandev-slack running in Socket Mode")
            stop.wait()
            handler.close()
        else:
            wsgi = make_wsgi_app(
                bolt, health, signing_secret=_secret(settings.slack_signing_secret)
            )
            server = serve(wsgi, settings.port)
            thread = threading.Thread(target=server.run, name="http", daemon=True)
            thread.start()
            log.info("kandev-slack running in HTTP mode on port %s", settings.port)
            stop.wait()
            stop_server(server, thread)
    finally:
        hints.stop()
        for worker in workers:
            worker.join(timeout=5)
        services.executor.shutdown(wait=True, cancel_futures=False)
        kandev.close()
        store.close()
    return 0
