"""A running replica: start its background workers, answer Slack until a signal, hand over.

:meth:`Bot.start` starts the background workers, :meth:`Bot.serve` answers Slack (Socket Mode
or HTTP) until a signal, and :meth:`Bot.close` hands the work over: on SIGTERM / SIGINT the
replica stops taking new work (Slack requests, claims, outbox items), finishes what is in
flight within :data:`HANDOVER_S` (less the part kept for giving back, :data:`HAND_BACK_S`),
gives back what it still holds (outbox items to nobody,
unfinished answers made stale at once) so another replica takes over now rather than after the
leases run out, and exits 0. kandev_slack/app.py builds it.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType

from slack_bolt import App

from kandev_slack.config.setting_values import secret_text
from kandev_slack.config.settings import Mode, Settings
from kandev_slack.core.exitcodes import EXIT_FAILED, EXIT_OK
from kandev_slack.core.signals import Signal
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.hints import KandevHints
from kandev_slack.ops import metrics
from kandev_slack.ops.health import Health
from kandev_slack.ops.logs import log_failure
from kandev_slack.ops.runtime import GcPauses, settle_heap
from kandev_slack.slack.transport.lanes import Lane
from kandev_slack.slack.transport.serving import serve_http, serve_ops, serve_socket_mode, stop_ops
from kandev_slack.slack.transport.socket_link import SocketModeRefused
from kandev_slack.store import Database
from kandev_slack.usecases.intake.sync import SyncEngine
from kandev_slack.usecases.leases import InFlight

log = logging.getLogger("kandev_slack.app")

#: On SIGTERM, how long the whole hand-over may take, from the signal to the process's exit.
HANDOVER_S = 10.0
#: Of it, the part kept for giving back what is left (its database writes) and closing: the
#: work in flight (answers on their way to Kandev, card posts and edits being sent) has the rest.
HAND_BACK_S = 3.5
#: The bound of each database write of the hand-over (lock waits and statements, PostgreSQL):
#: a table locked by another session cannot hold the exit up; the leases then simply expire.
HAND_BACK_WRITE_S = 1.0
#: If answers were in flight at the signal: once they ended, how long the publisher goes on
#: sending (their card edits) before it stops; within the work-in-flight part of HANDOVER_S.
EDIT_DRAIN_S = 2.0


@dataclass
class Bot:
    settings: Settings
    mode: Mode
    health: Health
    store: Database
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
    #: The publisher: it runs until the answers in flight ended and their edits were sent.
    edit_workers: list[threading.Thread] = field(default_factory=list)
    #: Wakes the publisher (its idle wait), so that it sees ``edits_stop`` at once.
    wake_edits: Callable[[], None] = lambda: None
    #: Set on SIGTERM / SIGINT: take no new work.
    stop: threading.Event = field(default_factory=threading.Event)
    #: Set once the answers in flight ended and their card edits were sent: the publisher stops.
    edits_stop: threading.Event = field(default_factory=threading.Event)
    #: Set once the work in flight is finished or handed over: stop renewing leases.
    leases_stop: threading.Event = field(default_factory=threading.Event)
    #: Answers still on their way to Kandev when the process stopped (handed over).
    abandoned: int = 0
    _stopping_at: float | None = None
    _closed: bool = False

    def start(self) -> None:
        """Start the background workers and (unless turned off) Kandev's push hints."""
        for worker in [*self.workers, *self.edit_workers]:
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
        ops = serve_ops(self.health, self.settings.metrics_port)
        try:
            if self.mode == "socket":
                token = secret_text(self.settings.slack_app_token)
                serve_socket_mode(self.bolt, self.health, token, self.stop)
            else:
                secret = secret_text(self.settings.slack_signing_secret)
                serve_http(self.bolt, self.health, secret, self.settings.port, self.stop)
        finally:
            self.close()
            if ops is not None:
                stop_ops(ops)

    def close(self) -> None:
        """Stop taking work, finish what is in flight within HANDOVER_S, give back the rest
        (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.stop.set()
        deadline = (self._stopping_at or time.monotonic()) + HANDOVER_S
        finish_by = deadline - HAND_BACK_S
        answering = bool(self.in_flight.keys())  # their card edits are sent before the end
        for wakeup in self.wakeups:
            wakeup.raise_()
        self.hints.stop()
        for worker in self.workers:  # each finishes its current step (a post being sent…)
            worker.join(timeout=max(finish_by - time.monotonic(), 0.0))
        if self.sync is not None:  # reads ahead not started are dropped
            self.sync.close()
        while self.in_flight.keys() and time.monotonic() < finish_by:
            time.sleep(0.05)  # answers on their way to Kandev
        drain_until = min(finish_by, time.monotonic() + EDIT_DRAIN_S) if answering else 0.0
        self._drain_edits(drain_until, finish_by)
        for lane in self.lanes:  # jobs not started by now are handed over, not run
            lane.shutdown(wait=False, cancel=True)
        self._hand_over()
        self.leases_stop.set()
        if self.lease_worker is not None and self.lease_worker.is_alive():
            # A renewal may be waiting on a lock: not past the budget (its thread is a daemon).
            left = min(HAND_BACK_WRITE_S, deadline - time.monotonic() - 1.0)
            self.lease_worker.join(timeout=max(left, 0.0))
        self.abandoned = len(self.in_flight.keys())
        if not self.abandoned:  # else a call still running must not see its client closed
            self.kandev.close()
        self.store.close()

    def _drain_edits(self, until: float, finish_by: float) -> None:
        """Let the publisher send what the answers just queued (their card edits) until
        ``until``, then stop it: it finishes the item it is sending, within ``finish_by``. No
        database read here: a locked outbox table must not hold the hand-over up."""
        self.edits_stop.wait(max(until - time.monotonic(), 0.0))
        self.edits_stop.set()
        self.wake_edits()  # an idle publisher stops now, not at the end of its idle wait
        for worker in self.edit_workers:
            worker.join(timeout=max(finish_by - time.monotonic(), 0.0))

    def _hand_over(self) -> None:
        """Give back what this replica still holds, so another takes it over now."""
        left = self.in_flight.keys()
        try:
            within = HAND_BACK_WRITE_S
            outbox = self.store.outbox
            items = outbox.outbox_release(self.worker_id, within_s=within) if self.worker_id else 0
            answers = self.store.submissions.release_submissions(left, within_s=within)
        except Exception:  # the leases still run out by themselves
            log_failure(log, "could not hand over the work in flight; its leases will expire")
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

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.stop.is_set():
            return
        self._stopping_at = time.monotonic()
        log.info("signal %s: taking no new work, handing over within %.0fs", signum, HANDOVER_S)
        self.stop.set()


def metrics_state(store: Database, health: Health) -> metrics.State:
    """What /metrics reads of the store and the health at scrape time."""
    stats = store.stats()
    linked, broken = store.links.counts()
    report = health.report()
    return metrics.State(
        pending_cards=stats.pending_cards,
        oldest_pending_created_at=stats.oldest_pending_at,
        outbox_pending=stats.outbox_pending,
        outbox_failed=stats.outbox_failed,
        health_problems=tuple(reason.split(":", 1)[0] for reason in report.reasons),
        last_sync_age_s=report.last_sync_age_s,
        linked_people=linked,
        broken_links=broken,
    )


def run_until_stopped(bot: Bot) -> int:
    """Start ``bot`` and serve until it is stopped (SIGTERM, SIGINT), then hand over; the
    exit code. Calls that outlived the hand-over end with the process."""
    settle_heap()
    GcPauses(metrics.gc_paused).install()  # /metrics: kandev_slack_gc_pause_seconds
    bot.start()
    try:
        bot.serve()
    except SocketModeRefused as refused:
        print(
            f"kandev-slack: Slack refused SLACK_APP_TOKEN ({refused.error}): check the app-level "
            "token (xapp-…) and its connections:write scope",
            file=sys.stderr,
        )
        return EXIT_FAILED
    stragglers = [t.name for t in threading.enumerate() if t.is_alive() and not t.daemon]
    stragglers = [name for name in stragglers if name != threading.current_thread().name]
    if bot.abandoned or stragglers:
        # Calls that outlived the hand-over (waiting on Kandev, or on a database lock) belong
        # to another replica now: end them with the process rather than wait for them (the
        # interpreter would join their threads, past the hand-over's budget).
        log.warning(
            "exiting with %d answer call(s) still waiting on Kandev, %d thread(s) busy",
            bot.abandoned,
            len(stragglers),
        )
        logging.shutdown()
        os._exit(EXIT_OK)
    return EXIT_OK
