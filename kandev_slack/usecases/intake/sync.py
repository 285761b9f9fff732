"""Kandev -> Slack: the loops that read Kandev, handing what they read to the use-cases.

- The full read: the paged active list, the source of truth, read whole every
  ``poll_interval`` seconds and after a (re)connect of the push hints (``wakeup``; at most one
  such read per ``poll_interval``, whatever the /ws does). Its new
  bundles go to discovery (kandev_slack/usecases/intake/discovery.py), the bundles that left it to
  the
  reconciler (kandev_slack/usecases/intake/reconciler.py); claims left without a message and the
  purge are
  housekeeping's (kandev_slack/usecases/followups/housekeeping.py), every so often.
- The hints loop (``run_hints``): a hint announcing a new bundle reads only that bundle, from
  its session's conversation (discovery: the newest part of the list when the hint names no
  task); a hint that a session's pending action went away reads only that session's
  conversation, for the cards of that session (the reconciler), never the list.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from kandev_slack.core.signals import Inbox, Signal
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevAuthError, KandevUnavailable
from kandev_slack.kandev.hints import NewPending, Resolved
from kandev_slack.ops.health import Health
from kandev_slack.ops.logs import log_failure
from kandev_slack.usecases.followups.housekeeping import Housekeeping, UnpostedCards
from kandev_slack.usecases.intake.discovery import NEWEST_MARGIN_S, Discovery, DiscoveryCards
from kandev_slack.usecases.intake.reconciler import Reconciler, ReconcilerCards, outcome_from_final
from kandev_slack.usecases.intake.unroutable import Unroutable
from kandev_slack.usecases.past_answers import AnsweredCards

__all__ = [
    "NEWEST_MARGIN_S",
    "ReadAgain",
    "SyncCards",
    "SyncEngine",
    "SyncReport",
    "Unroutable",
    "outcome_from_final",
]

log = logging.getLogger(__name__)

#: How often (and how far apart) a session a hint named is read again while Kandev's
#: conversation does not show its bundle decided yet; then the full reads are left to it.
RESOLVED_RETRIES = 3
RESOLVED_RETRY_S = 0.5


class SyncCards(DiscoveryCards, ReconcilerCards, UnpostedCards, AnsweredCards, Protocol):
    """What the loops' use-cases call on the cards (kandev_slack.store.CardsRepository):
    discovery's,
    the reconciler's, housekeeping's and past answers'."""


@dataclass
class SyncReport:
    listed: int = 0
    #: The pending ids the read showed.
    shown: set[str] = field(default_factory=set)
    posted: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)


class ReadAgain:
    """Discovery's ``look_again``: read a hinted bundle again in ``after_s``
    seconds (handed to the hints loop's inbox), or the whole list when hints are not handed
    over one by one (``new_bundles`` None: the full read's ``wakeup``)."""

    def __init__(self, wakeup: Signal, new_bundles: Inbox[NewPending] | None = None) -> None:
        self.wakeup, self.new_bundles = wakeup, new_bundles

    def look_again(self, hint: NewPending, after_s: float) -> None:
        inbox = self.new_bundles
        again = self.wakeup.raise_ if inbox is None else functools.partial(inbox.put, hint)
        later(after_s, again)


def later(after_s: float, call: Callable[[], None]) -> None:
    """Call ``call`` in ``after_s`` seconds, on a timer thread of its own."""
    timer = threading.Timer(after_s, call)
    timer.daemon = True
    timer.start()


@dataclass(eq=False)
class SyncEngine:
    """The loops; the use-cases they hand what they read to are built by the composition root
    (kandev_slack/wiring.py), discovery's ``look_again`` being a :class:`ReadAgain` on the same
    ``wakeup`` and ``new_bundles``."""

    kandev: KandevClient
    discovery: Discovery
    reconciler: Reconciler
    #: Re-queues claims left unposted and purges old records.
    housekeeping: Housekeeping
    health: Health
    #: Read the whole list now: raised by push hints (the hints reconnected, a resolution
    #: without a session), by discovery (no hints loop), and at shut-down.
    wakeup: Signal
    _: KW_ONLY
    poll_interval: float = 5.0
    #: New bundles announced by push hints: only those bundles are read, on a loop of
    #: their own (``run_hints``), so a full read in progress never delays them. Without it,
    #: the full read is made again instead.
    new_bundles: Inbox[NewPending] | None = None
    #: Sessions push hints said were resolved: read on the hints loop, session by session.
    #: Without it, the full read is made again instead.
    resolved_sessions: Inbox[Resolved] | None = None
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    _resolved_retries: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    #: When the latest reconnect of the push hints asked for a full read (monotonic seconds).
    _reconnect_read_at: float | None = field(default=None, init=False, repr=False)
    monotonic: Callable[[], float] = time.monotonic

    @property
    def unroutable(self) -> dict[str, Unroutable]:
        """Listed bundles whose route cannot be determined yet, by pending id."""
        return self.discovery.unroutable

    def close(self) -> None:
        """Stop reading ahead (at shut-down, once the loops have stopped). Idempotent."""
        self.discovery.close()

    def run(self, stop: threading.Event) -> None:
        """The full reads: every ``poll_interval`` and whenever ``wakeup`` is raised."""
        while not stop.is_set():
            self.wakeup.take()
            started = time.monotonic()
            self._cycle(self.reconcile_once)
            # Polls start every poll_interval, not poll_interval after the previous one ended,
            # so a bundle waits at most one interval to be discovered without push.
            self.wakeup.wait(max(self.poll_interval - (time.monotonic() - started), 0.0))

    def run_hints(self, stop: threading.Event) -> None:
        """The reads push hints ask for: the new bundles, or one session's conversation."""
        inbox = self.new_bundles or self.resolved_sessions
        if inbox is None:
            return
        while not stop.is_set():
            inbox.wakes.wait()
            inbox.wakes.take()
            hinted = self.new_bundles.drain() if self.new_bundles else []
            resolved = self.resolved_sessions.drain() if self.resolved_sessions else []
            if hinted and not stop.is_set():
                self._cycle(functools.partial(self.discover_new, hinted), full=False)
            if resolved and not stop.is_set():
                self._cycle(functools.partial(self.resolve_sessions, resolved), full=False)

    def on_connected(self) -> None:
        """The push hints (re)connected (called on the hints thread): what Kandev notified
        meanwhile is not replayed, so the whole list is read now, unless a reconnect asked for
        that less than ``poll_interval`` ago: a /ws that drops every link at once is no reason
        to read the list more often (the regular polls go on)."""
        now = self.monotonic()
        last = self._reconnect_read_at
        if last is not None and now - last < self.poll_interval:
            return
        self._reconnect_read_at = now
        self.wakeup.raise_()

    def on_resolved(self, hint: Resolved) -> None:
        """A push hint: some bundle of ``hint.session_id`` was resolved or ended (called on
        the hints thread: only hands it over)."""
        if hint.session_id and self.resolved_sessions is not None:
            self.resolved_sessions.put(hint)
        else:
            self.wakeup.raise_()

    def _cycle(self, work: Callable[[], SyncReport], *, full: bool = True) -> SyncReport | None:
        """Run one read of Kandev, reporting its failure in /healthz (None). Only a full cycle
        counts as a sync (a read for hints says nothing of the rest)."""
        try:
            report = work()
            self.health.clear("kandev")
            if full:
                self.health.clear("sync")
                self.health.synced()
            return report
        except KandevAuthError as exc:
            self.health.problem("kandev", str(exc))
            log.error("%s", exc)
        except KandevUnavailable as exc:
            self.health.failure("kandev", "unreachable", exc)
            log.warning("Kandev unavailable: %s", exc)
        except Exception as exc:
            self.health.failure("sync", "sync cycle failed", exc)
            log_failure(log, "sync cycle failed")
        return None

    def reconcile_once(self) -> SyncReport:
        """One full read: post the new bundles, end the cards of those that left the list."""
        started = self.clock()
        # Bundles already known to have a card are neither decoded nor looked up again: with
        # many bundles waiting, that was most of an idle cycle's CPU.
        # Each page's new bundles are posted as it is read: with 1,000 waiting at a start,
        # the first cards go while Kandev serves the rest of the list.
        posted: list[str] = []
        listed = self.kandev.list_active(
            lambda page: posted.extend(self.discovery.take_page(page)),
            known=self.discovery.known(),
        )
        self.discovery.take_listed(listed)
        report = SyncReport(listed=len(listed.ids), shown=set(listed.ids), posted=posted)
        self.housekeeping.tick()
        report.resolved = self.reconciler.reconcile(report.shown, started)
        return report

    def discover_new(self, hinted: Collection[NewPending] = ()) -> SyncReport:
        """Post the new bundles push hints announced (``hinted``), each read on its own; the
        whole list is read at the next full cycle."""
        listed, shown, posted = self.discovery.discover_new(hinted)
        return SyncReport(listed=listed, shown=shown, posted=posted)

    def resolve_sessions(self, hints: Collection[Resolved]) -> SyncReport:
        """End the cards of the sessions hints named, reading only their conversations."""
        report = SyncReport()
        for session_id in dict.fromkeys(h.session_id for h in hints if h.session_id):
            resolved, undecided = self.reconciler.resolve_session(session_id)
            report.resolved.extend(resolved)
            self._retry_resolved(session_id, bool(undecided))
        return report

    def _retry_resolved(self, session_id: str, undecided: bool) -> None:
        """Kandev may clear a session's pending action before its conversation shows how the
        bundle ended: read it again a few times, then leave it to the full reads."""
        left = self._resolved_retries.pop(session_id, RESOLVED_RETRIES)
        if not undecided or left <= 0 or self.resolved_sessions is None:
            return
        self._resolved_retries[session_id] = left - 1
        later(RESOLVED_RETRY_S, functools.partial(self.resolved_sessions.put, Resolved(session_id)))
