"""`kandev-slack run`: build every part from the settings, start the workers, serve Slack.

The steps are explicit: :func:`build` (the composition root) makes each component once and
hands it to whoever needs it (what two components share is its own small component); the
:class:`~bot.commands.run.Bot` it returns starts the background workers, answers Slack until a
signal and hands the work over (bot/commands/run.py).
"""

from __future__ import annotations

import logging
import sys
import threading
from dataclasses import dataclass
from datetime import UTC, datetime

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.commands.run import Bot, metrics_state, run_until_stopped
from bot.config.setting_values import secret_text
from bot.config.settings import Mode, Settings
from bot.core.exitcodes import EXIT_FAILED, StartupError
from bot.core.signals import Inbox, Signal
from bot.kandev.client import KandevClient
from bot.kandev.hints import KandevHints, NewPending, Resolved
from bot.ops import metrics
from bot.ops.health import Health
from bot.ops.logs import install_redaction, set_replica
from bot.ops.runtime import SWITCH_INTERVAL_S
from bot.slack.app import build_bolt_app
from bot.slack.lanes import (
    ANSWERING_WAITING,
    ANSWERING_WORKERS,
    READING_WAITING,
    READING_WORKERS,
    Lane,
)
from bot.slack.services import Services
from bot.slack.tell import RecoveryAnnouncer
from bot.slack_api.gateway import SlackGateway
from bot.slack_api.notify import Notifier
from bot.slack_api.web_client import make_web_client
from bot.store import Database
from bot.store.engine import SessionTimeouts
from bot.usecases.admission import Admission
from bot.usecases.answers import AnswerService
from bot.usecases.approvals import Approvals
from bot.usecases.claims import Claims
from bot.usecases.conversation import ConversationService
from bot.usecases.groups import Groups
from bot.usecases.home import HomeService
from bot.usecases.leases import InFlight, LeaseKeeper
from bot.usecases.listing import ListingService
from bot.usecases.past_answers import PastAnswers
from bot.usecases.permissions import Permissions
from bot.usecases.publisher import Publisher
from bot.usecases.recovery import Recovery
from bot.usecases.reminders import FollowUpWorker
from bot.usecases.snooze import Snoozes, SnoozeWorker
from bot.usecases.subscriptions import SubscriptionNotifier, SubscriptionService
from bot.usecases.sync import SyncEngine
from bot.usecases.tasks import TaskDirectory
from bot.usecases.thread_replies import ThreadReplies
from bot.usecases.waiting import Permalinks, WaitingQueue
from bot.usecases.workspace_check import WorkspaceCheck, check_at_start

log = logging.getLogger("bot.app")

#: How often crash recovery looks for answers a dead (or stopping) replica left unfinished: a
#: cheap indexed query, so a hand-over is taken within about a second.
RECOVERY_INTERVAL_S = 1.0


def _open_store(settings: Settings) -> Database:
    timeouts = SessionTimeouts(
        lock_s=settings.database_lock_timeout,
        statement_s=settings.database_statement_timeout,
        idle_in_transaction_s=settings.database_idle_in_transaction_timeout,
    )
    return Database(
        settings.database_url, retention_days=settings.retention_days, timeouts=timeouts
    )


def build(settings: Settings, mode: Mode) -> Bot:
    """Make every component once, wired explicitly. Raises StartupError."""
    health = Health()
    store = _open_store(settings)
    health.watch("database", store.problem)
    kandev = KandevClient(
        settings.kandev_url,
        secret_text(settings.kandev_token),
        retry_attempts=3,
        retry_max_wait=2.0,
    )
    workspace_check = WorkspaceCheck(settings.routing, kandev, health)
    check_at_start(workspace_check, health)

    web = make_web_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)
    parts = _use_cases(settings, health, store, kandev, SlackGateway(web))
    bolt = _bolt_app(web, parts.services, settings, mode)
    hints = _hints(settings, parts)
    bot = Bot(
        settings=settings,
        mode=mode,
        health=health,
        store=store,
        kandev=kandev,
        bolt=bolt,
        hints=hints,
        workers=[],
        lanes=[parts.services.answering, parts.services.reading],
        wakeups=[parts.sync_wakeup, parts.hinted, parts.card_changes, parts.approvals.wakeup],
        sync=parts.sync,
    )
    worker_id = parts.publisher.worker_id
    bot.worker_id, bot.in_flight = worker_id, parts.in_flight
    set_replica(worker_id)
    metrics.watch_state(lambda: metrics_state(store, health))
    bot.workers = _workers(parts, bot.stop)
    # Stopped only after the answers in flight (their card edits are sent first).
    bot.edit_workers = [_worker("publisher", parts.publisher.run, bot.edits_stop)]
    leases = LeaseKeeper(store.outbox, store.submissions, worker_id, parts.in_flight)
    bot.lease_worker = _worker("leases", leases.run, bot.leases_stop)
    if not workspace_check.done:
        poll = settings.kandev_poll_interval
        bot.workers.append(_worker("routing-check", workspace_check.run, bot.stop, poll))
    return bot


def _hints(settings: Settings, parts: _UseCases) -> KandevHints:
    """Kandev's push hints, each handed to the loops that act on it: new bundles to discovery,
    a session's pending action gone to the reconciler and the approvals, a reconnect to both
    (they read what they missed), a permission waiting to the approvals."""
    sync, approvals = parts.sync, parts.approvals

    def resolved(hint: Resolved) -> None:
        sync.on_resolved(hint)
        approvals.on_resolved(hint.session_id)

    def connected() -> None:
        sync.on_connected()
        approvals.on_connected()

    return KandevHints(
        settings.kandev_url,
        secret_text(settings.kandev_token),
        on_new_pending=parts.new_bundles.put,
        on_resolved=resolved,
        on_connected=connected,
        on_permission=lambda hint: approvals.on_permission(hint.task_id),
    )


@dataclass
class _UseCases:
    """The use cases that run as workers, what the listeners delegate to, and the signals and
    inbox that connect them."""

    publisher: Publisher
    sync: SyncEngine
    approvals: Approvals
    recovery: Recovery
    home: HomeService
    followups: FollowUpWorker
    dm_cards: SubscriptionNotifier
    snooze_ends: SnoozeWorker
    services: Services
    #: Answers on their way to Kandev (their leases are renewed while they are).
    in_flight: InFlight
    new_bundles: Inbox[NewPending]
    sync_wakeup: Signal
    hinted: Signal
    card_changes: Signal


def _use_cases(
    settings: Settings, health: Health, store: Database, kandev: KandevClient, slack: SlackGateway
) -> _UseCases:
    routing = settings.routing
    public_url = settings.kandev_public_url
    signals = _Signals()
    card_changes = signals.card_changes
    publisher = Publisher(
        store.outbox,
        store.cards,
        store.audit_log,
        slack,
        kandev_url=public_url,
        health=health,
        changes=card_changes,
        started_at=datetime.now(UTC),
        snoozes=store.snoozes,
    )
    tasks = TaskDirectory(kandev)
    permissions = Permissions(routing, slack)
    permalinks = Permalinks(slack)
    # Every use-case gets only the repositories it uses, never the whole database.
    queue = WaitingQueue(kandev, store.cards, routing, tasks, permalinks, permissions)
    past = PastAnswers(store.cards, routing)
    notifier = Notifier(slack)
    in_flight = InFlight()
    answers = AnswerService(
        kandev, store.cards, store.submissions, store.audit_log, publisher, in_flight
    )
    sync = _sync(settings, store, kandev, tasks, publisher, health, signals, past)
    recovery = _recovery(store, kandev, answers, permissions, notifier, in_flight)
    claims = Claims(
        store.claims, store.cards, store.audit_log, permissions.claim_for, publisher.wake
    )
    snoozes = Snoozes(
        store.snoozes,
        store.cards,
        store.audit_log,
        publisher.wake,
        publisher.changed,
        hour_s=settings.snooze_hour_s,
    )
    home = HomeService(
        queue,
        store.cards,
        store.followups,
        store.viewers,
        slack,
        card_changes,
        kandev_url=public_url,
        snoozes=snoozes,
    )
    return _UseCases(
        publisher=publisher,
        sync=sync,
        approvals=_approvals(settings, store, kandev, tasks, publisher, health),
        recovery=recovery,
        home=home,
        followups=FollowUpWorker(
            store.followups, permissions, publisher, health, lapse=claims.lapse_due
        ),
        dm_cards=SubscriptionNotifier(store.followups, permissions, publisher, health),
        snooze_ends=SnoozeWorker(snoozes, health),
        services=_listener_services(
            settings, store, kandev, queue, answers, home, notifier, past, claims, snoozes
        ),
        in_flight=in_flight,
        new_bundles=signals.new_bundles,
        sync_wakeup=signals.sync_wakeup,
        hinted=signals.hinted,
        card_changes=card_changes,
    )


def _approvals(
    settings: Settings,
    store: Database,
    kandev: KandevClient,
    tasks: TaskDirectory,
    publisher: Publisher,
    health: Health,
) -> Approvals:
    """Tool-permission requests found, posted once and ended (own worker)."""
    return Approvals(
        kandev.permissions,
        kandev.workspaces,
        store.cards,
        store.submissions,
        store.audit_log,
        settings.routing,
        tasks,
        publisher,
        health,
        clock=lambda: datetime.now(UTC),
        wakeup=Signal("approvals"),
        poll_interval=settings.kandev_poll_interval,
    )


def _recovery(
    store: Database,
    kandev: KandevClient,
    answers: AnswerService,
    permissions: Permissions,
    notifier: Notifier,
    in_flight: InFlight,
) -> Recovery:
    """Answers left in flight by a crashed process, re-sent or settled (own worker)."""
    return Recovery(
        kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        answers,
        permissions,
        RecoveryAnnouncer(notifier),
        in_flight,
        interval_s=RECOVERY_INTERVAL_S,
    )


class _Signals:
    """The wake-ups and inboxes that connect the workers. Push hints: a reconnect reads the
    whole list; a new bundle only the newest part of it, a resolved session only its
    conversation, on a loop of their own (bot/usecases/sync.py)."""

    def __init__(self) -> None:
        self.card_changes = Signal("card changed")
        self.sync_wakeup = Signal("look at Kandev")
        self.hinted = Signal("new bundles hinted")
        self.new_bundles: Inbox[NewPending] = Inbox("new bundles", wakes=self.hinted)
        self.resolved_sessions: Inbox[Resolved] = Inbox("resolved sessions", wakes=self.hinted)


def _sync(
    settings: Settings,
    store: Database,
    kandev: KandevClient,
    tasks: TaskDirectory,
    publisher: Publisher,
    health: Health,
    signals: _Signals,
    past: PastAnswers,
) -> SyncEngine:
    """Discovery, the reconciler and the housekeeping, on their loops."""
    return SyncEngine(
        kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        store.retention,
        settings.routing,
        tasks,
        publisher,
        health,
        signals.sync_wakeup,
        poll_interval=settings.kandev_poll_interval,
        new_bundles=signals.new_bundles,
        resolved_sessions=signals.resolved_sessions,
        past=past,
    )


def _listener_services(
    settings: Settings,
    store: Database,
    kandev: KandevClient,
    queue: WaitingQueue,
    answers: AnswerService,
    home: HomeService,
    notifier: Notifier,
    past: PastAnswers,
    claims: Claims,
    snoozes: Snoozes,
) -> Services:
    """What the Slack listeners delegate to, with the lanes behind interactions."""
    public_url = settings.kandev_public_url
    admission = Admission(store.cards, store.audit_log, queue, queue.permissions)
    return Services(
        admission=admission,
        answers=answers,
        listing=ListingService(
            queue,
            kandev,
            kandev_url=public_url,
            page_size=settings.kandev_list_page_size,
            snoozed=snoozes.snoozed_ids,
        ),
        home=home,
        notifier=notifier,
        kandev_public_url=public_url,
        answering=Lane("answering", workers=ANSWERING_WORKERS, waiting=ANSWERING_WAITING),
        reading=Lane("reading", workers=READING_WORKERS, waiting=READING_WAITING),
        conversation=ConversationService(kandev, past, settings.routing, queue.permalinks),
        subscriptions=SubscriptionService(store.followups, kandev),
        claims=claims,
        thread_replies=ThreadReplies(
            admission, store.thread_replies, queue.permissions, store.audit_log
        ),
        snoozes=snoozes,
        groups=Groups(store.cards, store.audit_log),
    )


def _bolt_app(web: WebClient, services: Services, settings: Settings, mode: Mode) -> App:
    """The Bolt app (its construction checks the bot token with Slack)."""
    try:
        return build_bolt_app(
            web,
            services,
            signing_secret=secret_text(settings.slack_signing_secret),
            socket_mode=mode == "socket",
        )
    except SlackApiError as exc:
        error = exc.response.get("error")
        raise StartupError(
            EXIT_FAILED, f"kandev-slack: Slack refused SLACK_BOT_TOKEN ({error})"
        ) from exc


def _workers(parts: _UseCases, stop: threading.Event) -> list[threading.Thread]:
    return [
        _worker("sync", parts.sync.run, stop),
        _worker("sync-hints", parts.sync.run_hints, stop),
        _worker("approvals", parts.approvals.run, stop),
        _worker("recovery", parts.recovery.run, stop),
        _worker("home", parts.home.run, stop),
        _worker("followups", parts.followups.run, stop),
        _worker("subscriptions", parts.dm_cards.run, stop),
        _worker("snoozes", parts.snooze_ends.run, stop),
    ]


def _worker(name: str, target, *args: object) -> threading.Thread:
    return threading.Thread(target=target, args=args, name=name, daemon=True)


def main_run(settings: Settings, mode: Mode) -> int:
    install_redaction(settings.secret_values())
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        bot = build(settings, mode)
    except StartupError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return exc.exit_code
    return run_until_stopped(bot)
