"""`kandev-slack run`: build every part from the settings, start the workers, serve Slack.

The steps are explicit: :func:`build` (the composition root) makes each component once and
hands it to whoever needs it (what two components share is its own small component); the
:class:`~kandev_slack.commands.run.Bot` it returns starts the background workers, answers Slack
until a
signal and hands the work over (kandev_slack/commands/run.py).
"""

from __future__ import annotations

import logging
import sys
import threading

from slack_bolt import App
from slack_bolt.error import BoltError
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from kandev_slack.commands.run import Bot, metrics_state, run_until_stopped
from kandev_slack.config.setting_values import secret_text
from kandev_slack.config.settings import Mode, Settings
from kandev_slack.core.exitcodes import EXIT_FAILED, StartupError
from kandev_slack.core.pending import KNOWN_KINDS
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.hints import KandevHints, Resolved
from kandev_slack.ops import metrics
from kandev_slack.ops.health import Health
from kandev_slack.ops.logs import install_redaction, log_failure, set_replica
from kandev_slack.ops.runtime import SWITCH_INTERVAL_S, fewer_malloc_arenas
from kandev_slack.ops.urgency import Urgency
from kandev_slack.slack.app import build_bolt_app
from kandev_slack.slack.services import Services
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.slack_api.startup import verify_bot_token
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database, normalize_url
from kandev_slack.store.migrations import SCHEMA_VERSION, upgrade_apart
from kandev_slack.store.sql.engine import SessionTimeouts, make_engine
from kandev_slack.usecases.intake.workspace_check import WorkspaceCheck, check_at_start
from kandev_slack.usecases.leases import LeaseKeeper
from kandev_slack.wiring import UseCases, use_cases

log = logging.getLogger("kandev_slack.app")


def _timeouts(settings: Settings) -> SessionTimeouts:
    return SessionTimeouts(
        lock_s=settings.database_lock_timeout,
        statement_s=settings.database_statement_timeout,
        idle_in_transaction_s=settings.database_idle_in_transaction_timeout,
    )


def _upgrade_apart(settings: Settings) -> None:
    """A schema upgrade, when one is due, in a child process: this one, about to serve, never
    loads Alembic (~10 MB for as long as it runs). Anything that goes wrong here is met again,
    and reported, when build() opens the store."""
    try:
        engine = make_engine(normalize_url(settings.database_url), _timeouts(settings))
    except Exception:
        return
    try:
        upgrade_apart(engine)
    except Exception:
        log.debug("no schema upgrade apart; the store's own does it", exc_info=True)
    finally:
        engine.dispose()


def _open_store(settings: Settings) -> Database:
    store = Database(
        settings.database_url,
        retention_days=settings.retention_days,
        timeouts=_timeouts(settings),
        vault=settings.vault(),
    )
    try:  # a key rotation completes: every token sealed anew under the newest key
        store.links.reseal_all()
    except Exception:  # the next start tries again; the old keys still open them meanwhile
        log_failure(log, "could not seal the Kandev tokens anew under the newest key")
    return store


def build(settings: Settings, mode: Mode) -> Bot:
    """Make every component once, wired explicitly. Raises StartupError."""
    # Slack refusing the bot token stops here; Slack unreachable is waited for (one line each).
    verify_bot_token(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)
    health = Health()
    store = _open_store(settings)
    health.watch("database", store.problem)
    health.watch("newer_release", store.newer_than_this)
    log.info(
        "this release knows schema version %d and the kinds %s; it leaves newer ones alone",
        SCHEMA_VERSION,
        ", ".join(sorted(KNOWN_KINDS)),
    )
    kandev = KandevClient(
        settings.kandev_url,
        secret_text(settings.kandev_token),
        retry_attempts=3,
        retry_max_wait=2.0,
        tasks_page_size=settings.kandev_tasks_page_size,
    )
    workspace_check = WorkspaceCheck(settings.routing, kandev, health)
    check_at_start(workspace_check, health)

    web = make_web_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)
    parts = use_cases(settings, health, store, kandev, SlackGateway(web))
    bolt = _bolt_app(web, parts.services, settings, mode, parts.urgency)
    hints = _hints(settings, parts)
    worker_id = parts.publisher.worker_id
    set_replica(worker_id)
    metrics.watch_state(lambda: metrics_state(store, health))
    # The stops the workers watch, made first so every worker is made before the Bot.
    stop, edits_stop, leases_stop = threading.Event(), threading.Event(), threading.Event()
    workers = _workers(parts, stop)
    if store.checkpoints is not None:
        workers.append(_worker("checkpoints", store.checkpoints.run, stop))
    if not workspace_check.done:
        poll = settings.kandev_poll_interval
        workers.append(_worker("routing-check", workspace_check.run, stop, poll))
    leases = LeaseKeeper(
        store.outbox,
        store.submissions,
        worker_id,
        parts.in_flight,
        holding=parts.publisher.holds_leases,
    )
    bot = Bot(
        settings=settings,
        mode=mode,
        health=health,
        store=store,
        kandev=kandev,
        bolt=bolt,
        hints=hints,
        workers=workers,
        lanes=[
            lane
            for lane in (
                parts.services.answering,
                parts.services.reading,
                parts.services.followups,
            )
            if lane is not None
        ],
        wakeups=[
            parts.sync_wakeup,
            parts.hinted,
            parts.card_changes,
            parts.approvals.wakeup,
            parts.approvals.hints_wakeup,
        ],
        worker_id=worker_id,
        in_flight=parts.in_flight,
        lease_worker=_worker("leases", leases.run, leases_stop),
        sync=parts.sync,
        # Stopped only after the answers in flight (their card edits are sent first).
        edit_workers=[_worker("publisher", parts.publisher.run, edits_stop)],
        wake_edits=parts.publisher.wake,
        stop=stop,
        edits_stop=edits_stop,
        leases_stop=leases_stop,
    )
    return bot


def _hints(settings: Settings, parts: UseCases) -> KandevHints:
    """Kandev's push hints, each handed to the loops that act on it: new bundles to discovery,
    a session's pending action gone to the reconciler and the approvals, a reconnect to both
    (they read what they missed), a permission waiting, a task's status changed and the link
    lost to the approvals (whose light intervals rely on the hints)."""
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
        on_permission=lambda hint: approvals.on_permission(hint.task_id, hint.session_id),
        on_status=lambda hint: approvals.on_status(
            hint.task_id, hint.session_id, hint.pending_action
        ),
        on_disconnected=approvals.on_disconnected,
    )


def _bolt_app(
    web: WebClient, services: Services, settings: Settings, mode: Mode, urgency: Urgency
) -> App:
    """The Bolt app (its construction checks the bot token with Slack); follow-up work waits
    for its requests' acks (``urgency``)."""
    try:
        return build_bolt_app(
            web,
            services,
            signing_secret=secret_text(settings.slack_signing_secret),
            socket_mode=mode == "socket",
            urgency=urgency,
        )
    except SlackApiError as exc:
        error = exc.response.get("error")
        raise StartupError(
            EXIT_FAILED, f"kandev-slack: Slack refused SLACK_BOT_TOKEN ({error})"
        ) from exc
    except BoltError as exc:  # its auth.test failed just after ours passed: Slack went away
        raise StartupError(EXIT_FAILED, f"kandev-slack: Slack's auth.test failed ({exc})") from exc


def _workers(parts: UseCases, stop: threading.Event) -> list[threading.Thread]:
    return [
        _worker("sync", parts.sync.run, stop),
        _worker("sync-hints", parts.sync.run_hints, stop),
        _worker("approvals", parts.approvals.run, stop),
        _worker("approval-hints", parts.approvals.run_hints, stop),
        _worker("recovery", parts.recovery.run, stop),
        _worker("home", parts.home.run, stop),
        _worker("followups", parts.followups.run, stop),
        _worker("subscriptions", parts.dm_cards.run, stop),
        _worker("snoozes", parts.snooze_ends.run, stop),
        _worker("quiet", parts.quiet_ends.run, stop),
        _worker("digests", parts.digests.run, stop),
    ]


def _worker(name: str, target, *args: object) -> threading.Thread:
    return threading.Thread(target=target, args=args, name=name, daemon=True)


def main_run(settings: Settings, mode: Mode) -> int:
    install_redaction(settings.secret_values())
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    fewer_malloc_arenas()  # before any thread starts
    _upgrade_apart(settings)  # before any thread starts: it forks
    try:
        bot = build(settings, mode)
    except StartupError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return exc.exit_code
    return run_until_stopped(bot)
