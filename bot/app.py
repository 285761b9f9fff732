"""`kandev-slack run`: build every part from the settings, start the workers, serve Slack.

The steps are explicit: :func:`build` makes each component once and hands it to whoever
needs it (what two components share is its own small component), :meth:`Bot.start` starts the
background workers, :meth:`Bot.serve` answers Slack (Socket Mode or HTTP) until a signal, and
:meth:`Bot.close` hands the work over: on SIGTERM / SIGINT the replica stops taking new work
(Slack requests, claims, outbox items), finishes what is in flight within
:data:`HANDOVER_S`, gives back what it still holds (outbox items to nobody, unfinished answers
made stale at once) so another replica takes over now rather than after the leases run out, and
exits 0.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field

from slack_bolt import App
from slack_sdk.errors import SlackApiError

from bot.config.settings import Mode, Settings
from bot.core.exitcodes import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from bot.core.signals import Inbox, Signal
from bot.kandev.client import KandevClient
from bot.kandev.errors import KandevError, KandevUnavailable
from bot.kandev.hints import KandevHints, NewPending, Resolved
from bot.ops import metrics
from bot.ops.health import Health
from bot.ops.logs import install_redaction, set_replica
from bot.slack.app import build_bolt_app
from bot.slack.http_server import THREADS as HTTP_THREADS
from bot.slack.http_server import make_ops_app, make_wsgi_app, serve, stop_accepting, stop_server
from bot.slack.lanes import Lane
from bot.slack.services import Services
from bot.slack.socket_mode import GuardedSocketModeHandler
from bot.slack_api.gateway import SlackGateway, make_web_client
from bot.slack_api.notify import Notifier
from bot.store import Store
from bot.usecases.admission import Admission
from bot.usecases.answers import AnswerService
from bot.usecases.conversation import ConversationService
from bot.usecases.home import HomeService
from bot.usecases.leases import InFlight, LeaseKeeper
from bot.usecases.listing import ListingService
from bot.usecases.past_answers import PastAnswers
from bot.usecases.permissions import Permissions
from bot.usecases.publisher import Publisher
from bot.usecases.recovery import Recovery
from bot.usecases.reminders import FollowUpWorker
from bot.usecases.subscriptions import SubscriptionNotifier, SubscriptionService
from bot.usecases.sync import SyncEngine
from bot.usecases.tasks import TaskDirectory
from bot.usecases.waiting import Permalinks, WaitingQueue
from bot.usecases.workspace_check import WorkspaceCheck

log = logging.getLogger("bot.app")

#: How often crash recovery looks for answers a dead (or stopping) replica left unfinished: a
#: cheap indexed query, so a hand-over is taken within about a second.
RECOVERY_INTERVAL_S = 1.0
#: Answers on their way to Kandev at once, and how many more may wait their turn (then:
#: "busy"). A crowd is taken whole: 50 people clicking within a second are all in flight at
#: once when Kandev takes a second per answer (a busy machine), and 32 Kandev calls at a time
#: (Kandev's own concurrency, not a queue in front of it) clear them in about two seconds. A
#: waiting answer is a recorded submission and a closure (a few KB), so the waiting room holds
#: a burst of a few hundred clicks. "Busy" is for a Kandev that stopped answering: then 256
#: people wait at most Kandev's timeout and the next are told at once.
ANSWERING_WORKERS, ANSWERING_WAITING = 32, 224
#: Listings and Home tabs built at once, and how many more may wait (then: "busy"). Fifty
#: people running /kandev-questions within a second while each listing takes Kandev a second
#: are all taken (with 4 + 8, 29 of them were told "busy"): 8 reads of Kandev at a time clear
#: them in a few seconds, the slash command answering later through its response_url.
READING_WORKERS, READING_WAITING = 8, 56
#: How long a thread running Python may keep the interpreter while another waits for it
#: (CPython's default: 5 ms). An ack is a few short steps, each of which may have to wait that
#: long for a thread decoding a listing of 1,000 bundles or finishing earlier clicks; at 0.5 ms
#: those waits stay within the ack's budget, for a few percent more switching.
SWITCH_INTERVAL_S = 0.0005
#: On SIGTERM, how long the work in flight (answers on their way to Kandev, card posts and
#: edits being sent) may take to finish before what is left is handed over.
HANDOVER_S = 10.0
#: Of that, how long Slack requests being answered may take once no new ones are accepted.
SLACK_DRAIN_S = 3.0


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
    #: Who this replica is in the outbox's leases (its publisher), and the answers it sends.
    worker_id: str = ""
    in_flight: InFlight = field(default_factory=InFlight)
    #: The lease heartbeat: it runs until the hand-over is done (see :meth:`close`).
    lease_worker: threading.Thread | None = None
    #: The sync engine: its reads ahead stop with its loops (see :meth:`close`).
    sync: SyncEngine | None = None
    #: Set on SIGTERM / SIGINT: take no new work.
    stop: threading.Event = field(default_factory=threading.Event)
    #: Set once the work in flight is finished or handed over: stop renewing leases.
    leases_stop: threading.Event = field(default_factory=threading.Event)
    #: Answers still on their way to Kandev when the process stopped (handed over).
    abandoned: int = 0
    _stopping_at: float | None = None
    _closed: bool = False

    def start(self) -> None:
        """Start the background workers and (unless turned off) Kandev's push hints."""
        for worker in self.workers:
            worker.start()
        if self.lease_worker is not None:
            self.lease_worker.start()
        if self.settings.kandev_hints:
            self.hints.start()
        else:
            log.info(
                "push hints off (KANDEV_HINTS): polling every %ss",
                self.settings.kandev_poll_interval,
            )

    def serve(self) -> None:
        """Answer Slack until SIGTERM / SIGINT, then hand the work over (:meth:`close`)."""
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        ops = self._serve_metrics()
        try:
            if self.mode == "socket":
                self._serve_socket_mode()
            else:
                self._serve_http()
        finally:
            self.close()
            if ops is not None:
                stop_server(*ops)

    def close(self) -> None:
        """Stop taking work, finish what is in flight within HANDOVER_S, give back the rest
        (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.stop.set()
        deadline = (self._stopping_at or time.monotonic()) + HANDOVER_S
        for wakeup in self.wakeups:
            wakeup.raise_()
        self.hints.stop()
        for worker in self.workers:  # each finishes its current step (a post being sent…)
            worker.join(timeout=max(deadline - time.monotonic(), 0.0))
        if self.sync is not None:  # reads ahead not started are dropped
            self.sync.close()
        while self.in_flight.keys() and time.monotonic() < deadline:
            time.sleep(0.05)  # answers on their way to Kandev
        for lane in self.lanes:  # jobs not started by now are handed over, not run
            lane.shutdown(wait=False, cancel=True)
        self._hand_over()
        self.leases_stop.set()
        if self.lease_worker is not None and self.lease_worker.is_alive():
            self.lease_worker.join(timeout=5)
        self.abandoned = len(self.in_flight.keys())
        if not self.abandoned:  # else a call still running must not see its client closed
            self.kandev.close()
        self.store.close()

    def _hand_over(self) -> None:
        """Give back what this replica still holds, so another takes it over now."""
        left = self.in_flight.keys()
        try:
            items = self.store.outbox_release(self.worker_id) if self.worker_id else 0
            answers = self.store.release_submissions(left)
        except Exception:  # the leases still run out by themselves
            log.exception("could not hand over the work in flight; its leases will expire")
            return
        if items or answers:
            log.info(
                "replica %s handed over %d card post(s)/edit(s) and %d unfinished answer(s)",
                self.worker_id,
                items,
                answers,
            )
        else:
            log.info("stopped with nothing left in flight")

    def _on_signal(self, signum, _frame) -> None:
        if self.stop.is_set():
            return
        self._stopping_at = time.monotonic()
        log.info("signal %s: taking no new work, handing over within %.0fs", signum, HANDOVER_S)
        self.stop.set()

    def _serve_metrics(self) -> tuple | None:
        """The server of /metrics and /healthz on METRICS_PORT, if set."""
        port = self.settings.metrics_port
        if port is None:
            return None
        server = serve(make_ops_app(self.health), port)
        thread = threading.Thread(target=server.run, name="metrics-http", daemon=True)
        thread.start()
        log.info("serving /metrics and /healthz on port %s", port)
        return server, thread

    def _serve_socket_mode(self) -> None:
        handler = GuardedSocketModeHandler(
            self.bolt,
            app_token=_secret(self.settings.slack_app_token),
            # Envelopes handled at once, each until acked: as HTTP mode's server threads.
            concurrency=HTTP_THREADS,
        )
        handler.connect()
        log.info("kandev-slack running in Socket Mode")
        self.stop.wait()
        handler.close()  # Slack sends the next envelopes to another replica's connection
        log.info("Socket Mode connection closed")

    def _serve_http(self) -> None:
        secret = _secret(self.settings.slack_signing_secret)
        server = serve(
            make_wsgi_app(self.bolt, self.health, signing_secret=secret), self.settings.port
        )
        thread = threading.Thread(target=server.run, name="http", daemon=True)
        thread.start()
        log.info("kandev-slack running in HTTP mode on port %s", self.settings.port)
        self.stop.wait()
        stop_accepting(server, SLACK_DRAIN_S)
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
    # Push hints: a reconnect reads the whole list; a new bundle only the newest part of it, a
    # resolved session only its conversation, on a loop of their own (bot/usecases/sync.py).
    hinted = Signal("new bundles hinted")
    new_bundles: Inbox[NewPending] = Inbox("new bundles", wakes=hinted)
    resolved_sessions: Inbox[Resolved] = Inbox("resolved sessions", wakes=hinted)
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
        new_bundles=new_bundles,
        resolved_sessions=resolved_sessions,
        past=past,
    )
    recovery = Recovery(
        kandev,
        store,
        answers,
        permissions,
        notifier,
        in_flight,
        interval_s=RECOVERY_INTERVAL_S,
    )
    home = HomeService(queue, store, slack, card_changes, kandev_url=public_url)
    followups = FollowUpWorker(store, permissions, publisher, health)
    dm_cards = SubscriptionNotifier(store, permissions, publisher, health)
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
        subscriptions=SubscriptionService(store, kandev),
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
        on_new_pending=new_bundles.put,
        on_resolved=sync.on_resolved,
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
        wakeups=[sync_wakeup, hinted, card_changes],
        sync=sync,
    )
    leases = LeaseKeeper(store, publisher.worker_id, in_flight)
    poll = settings.kandev_poll_interval
    bot.worker_id, bot.in_flight = publisher.worker_id, in_flight
    set_replica(publisher.worker_id)
    metrics.watch_state(lambda: _state(store, health))
    bot.workers = [
        _worker("publisher", publisher.run, bot.stop),
        _worker("sync", sync.run, bot.stop),
        _worker("sync-hints", sync.run_hints, bot.stop),
        _worker("recovery", recovery.run, bot.stop),
        _worker("home", home.run, bot.stop),
        _worker("followups", followups.run, bot.stop),
        _worker("subscriptions", dm_cards.run, bot.stop),
    ]
    bot.lease_worker = _worker("leases", leases.run, bot.leases_stop)
    if not workspace_check.done:
        bot.workers.append(_worker("routing-check", workspace_check.run, bot.stop, poll))
    return bot


def _state(store: Store, health: Health) -> metrics.State:
    stats = store.stats()
    report = health.report()
    return metrics.State(
        pending_cards=stats.pending_cards,
        oldest_pending_created_at=stats.oldest_pending_at,
        outbox_pending=stats.outbox_pending,
        outbox_failed=stats.outbox_failed,
        health_problems=tuple(reason.split(":", 1)[0] for reason in report.reasons),
        last_sync_age_s=report.last_sync_age_s,
    )


def _worker(name: str, target, *args: object) -> threading.Thread:
    return threading.Thread(target=target, args=args, name=name, daemon=True)


def settle_heap() -> None:
    """Move everything built so far (modules, models' schemas, the bot's services: it all lives
    as long as the process) out of the garbage collector's sight. A full collection stops every
    thread, an ack's too, for as long as it walks the heap: with 1,000 bundles being decoded it
    took 60–90 ms over that heap, 2–5 ms without it."""
    gc.collect()
    gc.freeze()


def main_run(settings: Settings, mode: Mode) -> int:
    install_redaction(settings.secret_values())
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        bot = build(settings, mode)
    except StartupError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return exc.exit_code
    settle_heap()
    bot.start()
    bot.serve()
    if bot.abandoned:
        # Calls that outlived the hand-over belong to another replica now: end them with the
        # process rather than wait for Kandev (the interpreter would join their threads).
        log.warning("exiting with %d answer call(s) still waiting on Kandev", bot.abandoned)
        logging.shutdown()
        os._exit(EXIT_OK)
    return EXIT_OK
