"""Kandev -> Slack: discover new bundles, post their cards, notice bundles resolved elsewhere.

The paged active list is the source of truth, read whole every ``poll_interval`` seconds and
right after a push hint that some bundle was resolved, and after every (re)connect of the
hints. A push hint announcing a new bundle reads only the newest part of that list (the
bundles created since shortly before the newest one already seen) and posts what is new in it:
with a long queue waiting that is a fraction of the whole list, and nothing else of a full
cycle (bundles resolved elsewhere, unroutable reports) waits in front of the new card. A hinted
bundle that part does not show yet is looked for again shortly, and the next full read finds
any bundle a hint missed; the store's claim keeps each bundle posted once whichever read sees
it first. While that part is read, what posting the hinted bundle needs besides is read at the
same time (its task, and how many questions it has), on a few threads of the engine's (a read
still waiting its turn when the bundle is posted is made then instead); the task is then looked
up as always, so a lookup that failed still fails closed.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime, timedelta

from bot.config.routing import Routing
from bot.core.clarification import Bundle
from bot.core.domain import Card, CardOutcome, CardState
from bot.core.signals import Inbox, Signal
from bot.kandev.client import KandevClient
from bot.kandev.errors import KandevAuthError, KandevError, KandevUnavailable
from bot.kandev.hints import NewPending
from bot.kandev.models import FinalState
from bot.ops.health import Health
from bot.store import Store
from bot.usecases.past_answers import PastAnswers, question_key
from bot.usecases.publisher import Publisher
from bot.usecases.tasks import TaskDirectory, TaskUnknown

log = logging.getLogger(__name__)

#: A bundle missing from the active list whose messages still say "pending" is ended only after
#: it stayed missing this long (guards against a list taken mid-change).
PENDING_GRACE_S = 10.0
#: Bundles younger than this are checked for completeness before they are posted.
YOUNG_BUNDLE_S = 30.0
#: How soon discovery looks again at a bundle whose questions are still being written.
INCOMPLETE_RETRY_S = 0.2
#: An answer submitted from Slack within this window owns the card's resolution.
SUBMISSION_GRACE_S = 30.0
#: Claims left without a message are looked for this often (and after start-up) rather than
#: every cycle: the lookup scans the whole card history and only finds claims over 30 s old.
UNPOSTED_CHECK_S = 30.0
#: First and longest wait before a bundle whose route could not be determined is tried again.
UNROUTABLE_RETRY_S = (1.0, 30.0)
#: A hint's read of the newest bundles starts this long before the newest one seen so far
#: (Kandev's creation times have whole seconds, and two bundles created together may become
#: visible in either order).
NEWEST_MARGIN_S = 2.0
#: How often (and how far apart) a hinted bundle that the newest bundles do not show yet is
#: looked for again before the next full read is left to find it.
HINT_RETRIES = 10
HINT_RETRY_S = 0.2
#: Reads ahead for hinted bundles running at once (two a bundle: its question total and its
#: task); a burst of hints queues the rest instead of starting a thread for each.
READ_AHEAD_WORKERS = 4


@dataclass
class Unroutable:
    """A bundle that waits because its route cannot be determined (never posted by default)."""

    reason: str
    attempts: int
    next_try: float  # monotonic time


@dataclass
class SyncReport:
    listed: int = 0
    #: The pending ids the read showed.
    shown: set[str] = field(default_factory=set)
    posted: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)


def outcome_from_final(final: FinalState, at: datetime) -> CardOutcome | None:
    """The card outcome for a bundle that left the active list (None: not decided yet)."""
    if final.status == "answered":
        return CardOutcome(state=CardState.ANSWERED, via="kandev", answers=final.answers, at=at)
    if final.status == "rejected":
        return CardOutcome(state=CardState.REJECTED, via="kandev", at=at)
    if final.status in ("cancelled", "expired"):
        return CardOutcome(state=CardState.ENDED, via="kandev", at=at)
    if final.status == "unknown":
        return CardOutcome(state=CardState.UNAVAILABLE, via="kandev", at=at)
    return None


@dataclass(eq=False)
class SyncEngine:
    kandev: KandevClient
    store: Store
    routing: Routing
    tasks: TaskDirectory
    publisher: Publisher
    health: Health
    #: Read the whole list now: raised by push hints (a bundle was resolved, the hints
    #: reconnected), by this engine, and at shut-down.
    wakeup: Signal
    _: KW_ONLY
    poll_interval: float = 5.0
    #: New bundles announced by push hints: only the newest bundles are read, on a loop of
    #: their own (``run_hints``), so a full read in progress never delays them. Without it,
    #: the full read is made again instead.
    new_bundles: Inbox[NewPending] | None = None
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    #: Earlier answers to the same questions, shown on a new card (default: from the store).
    past: PastAnswers | None = None
    #: Listed bundles whose route cannot be determined yet, by pending id.
    unroutable: dict[str, Unroutable] = field(default_factory=dict, init=False)
    _missing_since: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    #: Listed bundles whose card is in the store.
    _known: set[str] = field(default_factory=set, init=False, repr=False)
    #: Monotonic time of the last lookup of claims left without a message.
    _unposted_checked: float | None = field(default=None, init=False, repr=False)
    #: Kandev's creation time of the newest bundle any read showed (Kandev's clock).
    _newest: datetime | None = field(default=None, init=False, repr=False)
    #: Hinted bundles not shown yet by a read of the newest ones: looks left, by pending id.
    _hint_retries: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    #: Reads started for hinted bundles while the newest bundles are read, by pending id: the
    #: question total, and the task lookup (which warms the Kandev client's cache).
    _totals: dict[str, Future[int]] = field(default_factory=dict, init=False, repr=False)
    _lookups: dict[str, Future[object]] = field(default_factory=dict, init=False, repr=False)
    #: Where those reads run (shut down by :meth:`close`).
    _read_ahead_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(
            max_workers=READ_AHEAD_WORKERS, thread_name_prefix="sync-read-ahead"
        ),
        init=False,
        repr=False,
    )
    #: Held while the bundles of a read are posted: the full read and the hinted one run on two
    #: threads and share what is known about each bundle.
    _posting: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.past is None:
            self.past = PastAnswers(self.store, self.routing)

    def close(self) -> None:
        """Stop reading ahead (at shut-down, once the loops have stopped): reads not started
        are cancelled, those running end on their own; a read ahead asked for later is not made
        (what it would read is read when the bundle is posted). Idempotent."""
        self._read_ahead_pool.shutdown(wait=False, cancel_futures=True)

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
        """The reads of the newest bundles, whenever push hints hand new bundles over."""
        inbox = self.new_bundles
        if inbox is None:
            return
        while not stop.is_set():
            inbox.wakes.wait()
            inbox.wakes.take()
            hinted = inbox.drain()
            if hinted and not stop.is_set():
                self._cycle(functools.partial(self.discover_new, hinted), full=False)

    def _cycle(self, work: Callable[[], SyncReport], *, full: bool = True) -> SyncReport | None:
        """Run one read of Kandev, reporting its failure in /healthz (None). Only a full cycle
        counts as a sync (a read of the newest bundles says nothing of the rest)."""
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
            log.exception("sync cycle failed")
        return None

    def reconcile_once(self) -> SyncReport:
        report = SyncReport()
        started = self.clock()
        # Bundles already known to have a card are neither decoded nor looked up again: with
        # many bundles waiting, that was most of an idle cycle's CPU.
        with self._posting:
            known = frozenset(self._known)
        listed = self.kandev.list_active(known=known)
        report.listed = len(listed.ids)
        self._saw_newest(listed.newest)
        active = report.shown = set(listed.ids)
        for pending_id in listed.ids:
            self._missing_since.pop(pending_id, None)
        with self._posting:
            self._known &= active
            report.posted = self._post_unknown(listed.new)
            self._report_unroutable(active)
        self._recover_unposted()
        # Only the cards of bundles that left the list are read whole (with many bundles
        # waiting, decoding every pending card each cycle was most of an idle cycle's CPU).
        for pending_id, created_at in self.store.pending_ids():
            if pending_id in active or created_at >= started:
                continue
            card = self.store.get(pending_id)
            if card is None or card.state is not CardState.PENDING:
                continue  # resolved meanwhile (e.g. an answer from Slack)
            if self._resolve_elsewhere(card):
                report.resolved.append(pending_id)
        return report

    def discover_new(self, hinted: Collection[NewPending] = ()) -> SyncReport:
        """Post the new bundles among the newest ones (push hints announced ``hinted``),
        reading only the part of the list created since shortly before the newest bundle seen
        so far; the whole list is read at the next full cycle."""
        try:
            return self._discover_new(hinted)
        finally:
            self._totals.clear()  # reads ahead not used by now are made again when needed
            self._lookups.clear()

    def _discover_new(self, hinted: Collection[NewPending]) -> SyncReport:
        report = SyncReport()
        for hint in hinted:
            self._read_ahead(hint)
        newest = self._newest
        since = newest - timedelta(seconds=NEWEST_MARGIN_S) if newest else None
        bundles = self.kandev.list_pending(created_since=since)
        report.listed = len(bundles)
        self._saw(bundles)
        report.shown = {b.pending_id for b in bundles}
        with self._posting:
            report.posted = self._post_unknown(bundles)
            self._retry_hinted(hinted, report.shown)
        return report

    def _post_unknown(self, bundles: list[Bundle]) -> list[str]:
        """Post the bundles not known to have a card yet (with ``_posting`` held)."""
        posted = []
        for bundle in bundles:
            if bundle.pending_id in self._known or not self._due(bundle.pending_id):
                continue
            if self.store.get(bundle.pending_id) is not None:
                self._known.add(bundle.pending_id)
            elif self._post_new(bundle):
                self._known.add(bundle.pending_id)
                posted.append(bundle.pending_id)
        return posted

    def _read_ahead(self, hint: NewPending) -> None:
        """Start reading the hinted bundle's question total and task in the background."""
        pending_id, task_id = hint.pending_id, hint.task_id
        if not task_id or pending_id in self._known or pending_id in self._totals:
            return
        session_id = hint.session_id or None
        try:
            total = self._read_ahead_pool.submit(
                self.kandev.question_total, task_id, pending_id, session_id=session_id
            )
            lookup = self._read_ahead_pool.submit(self.tasks.info, task_id)
        except RuntimeError:  # closed: shutting down
            return
        self._totals[pending_id], self._lookups[pending_id] = total, lookup

    def _retry_hinted(self, hinted: Collection[NewPending], shown: Collection[str]) -> None:
        """Hinted bundles a read did not show are looked for again a few times (a bundle
        shown but not posted yet has its own retry: incomplete, unroutable)."""
        for hint in hinted:
            pending_id = hint.pending_id
            if pending_id in shown or pending_id in self._known:
                self._hint_retries.pop(pending_id, None)
                continue
            left = self._hint_retries.get(pending_id, HINT_RETRIES)
            if left > 0:
                self._hint_retries[pending_id] = left - 1
                self._look_again(hint, HINT_RETRY_S)
            else:  # the next full read finds it
                self._hint_retries.pop(pending_id, None)

    def _saw(self, bundles: list[Bundle]) -> None:
        self._saw_newest(max((b.created_at for b in bundles), default=None))

    def _saw_newest(self, newest: datetime | None) -> None:
        with self._posting:
            if newest is not None and (self._newest is None or newest > self._newest):
                self._newest = newest

    def _look_again(self, hint: NewPending, after_s: float) -> None:
        """Read the newest bundles again in ``after_s`` (the whole list when hints are not
        handed over one by one)."""
        if self.new_bundles is None:
            again: Callable[[], None] = self.wakeup.raise_
        else:
            inbox = self.new_bundles

            def again() -> None:
                inbox.put(hint)

        timer = threading.Timer(after_s, again)
        timer.daemon = True
        timer.start()

    # ---- new bundles ---------------------------------------------------------------------

    def _post_new(self, bundle: Bundle) -> bool:
        if not self._complete(bundle):
            self._look_again(
                NewPending(bundle.pending_id, bundle.task_id, bundle.session_id),
                INCOMPLETE_RETRY_S,
            )
            return False
        lookup = self._lookups.pop(bundle.pending_id, None)
        # A lookup still waiting its turn is dropped; one started is waited for (the lookup
        # below then reads its result from the cache).
        if lookup is not None and not lookup.cancel():
            lookup.exception()
        try:
            task = self.tasks.info(bundle.task_id)
        except TaskUnknown as exc:
            return self._cannot_route(bundle.pending_id, exc.reason)
        route = self.routing.route_for_task(task)
        if route is None:
            name = task.workspace_name or task.workspace_id
            reason = f"no channel for workspace {name!r}: add a [[route]] or a default channel"
            return self._cannot_route(bundle.pending_id, reason)
        self.unroutable.pop(bundle.pending_id, None)
        claimed = self.store.claim(
            bundle.pending_id,
            question_key=question_key(task.workspace_id, bundle),
            past=self.past.last(bundle, task, route),
            task_id=bundle.task_id,
            session_id=bundle.session_id,
            workspace_id=task.workspace_id,
            channel=route.channel,
            bundle=bundle,
            task=task,
        )
        if not claimed:
            return False  # another replica (or an earlier cycle) has it
        card = self.store.get(bundle.pending_id)
        if card is not None:
            self.publisher.enqueue_post(card)
            self.store.audit(bundle.pending_id, None, "post", "kandev", "queued", route.channel)
        return True

    def _due(self, pending_id: str) -> bool:
        waiting = self.unroutable.get(pending_id)
        return waiting is None or time.monotonic() >= waiting.next_try

    def _cannot_route(self, pending_id: str, reason: str) -> bool:
        """Fail closed: the bundle is not posted anywhere; it is tried again with backoff."""
        attempts = self.unroutable[pending_id].attempts + 1 if pending_id in self.unroutable else 1
        first, longest = UNROUTABLE_RETRY_S
        wait = min(first * 2 ** (attempts - 1), longest)
        self.unroutable[pending_id] = Unroutable(reason, attempts, time.monotonic() + wait)
        log.warning(
            "question %s cannot be routed (%s); retrying in %.0f s", pending_id, reason, wait
        )
        return False

    def _report_unroutable(self, active: set[str]) -> None:
        for gone in set(self.unroutable) - active:
            del self.unroutable[gone]
        if not self.unroutable:
            self.health.clear("unroutable")
            return
        count = len(self.unroutable)
        reasons = sorted({u.reason for u in self.unroutable.values()})
        what = "question cannot" if count == 1 else "questions cannot"
        self.health.problem("unroutable", f"{count} {what} be routed: {'; '.join(reasons)}")

    def _complete(self, bundle: Bundle) -> bool:
        """False while Kandev is still writing the bundle's questions (a young bundle can be
        listed with only some of them; a card must never show a partial bundle)."""
        ahead = self._totals.pop(bundle.pending_id, None)
        if ahead is not None:
            ahead.cancel()  # still waiting its turn (a burst of hints): read below instead
        if (self.clock() - bundle.created_at).total_seconds() > YOUNG_BUNDLE_S:
            return True
        # Read ahead (maybe before the list was): a total of 0 means no question was written
        # yet when it was read, so it is read again.
        total = 0 if ahead is None or _failed(ahead) else ahead.result()
        if total == 0:
            total = self.kandev.question_total(
                bundle.task_id, bundle.pending_id, session_id=bundle.session_id or None
            )
        return total <= len(bundle.questions)

    def _recover_unposted(self) -> None:
        """Claims that never got an outbox entry (a crash between the two) are queued again."""
        now = time.monotonic()
        if self._unposted_checked is not None and now - self._unposted_checked < UNPOSTED_CHECK_S:
            return
        self._unposted_checked = now
        for card in self.store.unposted(older_than_s=30):
            self.publisher.enqueue_post(card)
        self.store.purge()  # retention: old resolved cards, audit entries, outbox rows…

    # ---- bundles that left the active list -----------------------------------------------

    def _resolve_elsewhere(self, card: Card) -> bool:
        if self.store.submission_in_flight(card.pending_id, SUBMISSION_GRACE_S):
            return False  # a Slack answer is being recorded; the answer use-case owns this card
        try:
            final = self.kandev.final_state(card.task_id, card.pending_id)
        except KandevUnavailable:
            raise
        except KandevError as exc:
            log.warning("final state of %s not readable: %s", card.pending_id, exc)
            final = FinalState(status="unknown")
        now = self.clock()
        outcome = outcome_from_final(final, now)
        if outcome is None:
            first = self._missing_since.setdefault(card.pending_id, time.monotonic())
            if time.monotonic() - first < PENDING_GRACE_S:
                return False
            outcome = CardOutcome(state=CardState.ENDED, via="kandev", at=now)
        self._missing_since.pop(card.pending_id, None)
        outcome = self._attribute(card, outcome)
        if not self.store.transition(card.pending_id, outcome):
            return False
        self.store.audit(card.pending_id, outcome.by_user, outcome.state.value, "kandev", "synced")
        updated = self.store.get(card.pending_id)
        if updated is not None:
            self.publisher.enqueue_update(updated)
        return True

    def _attribute(self, card: Card, outcome: CardOutcome) -> CardOutcome:
        """An answer that a Slack user won shows their name, even if sync notices it first."""
        won = self.store.won_submission(card.pending_id)
        if won is None or outcome.state not in (CardState.ANSWERED, CardState.REJECTED):
            return outcome
        update: dict[str, object] = {"via": "slack", "by_user": won.user}
        if outcome.state is CardState.REJECTED:
            update["reason"] = won.content.reason
        return outcome.model_copy(update=update)


def _failed(future: Future) -> bool:
    """Wait for a read ahead: True if it raised or was cancelled (never started: shut down, or
    still waiting its turn when needed); the caller then reads itself."""
    try:
        return future.exception() is not None
    except CancelledError:
        return True
