"""Kandev -> Slack: discover new bundles, post their cards, notice bundles resolved elsewhere.

Push hints (Kandev's WebSocket) only wake the loop; the paged active list is the source of
truth, polled every ``poll_interval`` seconds and right after every hint or reconnect.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime

from bot.domain import Card, CardOutcome, CardState
from bot.health import Health
from bot.kandev.client import KandevClient
from bot.kandev.errors import KandevAuthError, KandevError, KandevUnavailable
from bot.kandev.models import Bundle, FinalState
from bot.past import PastAnswers, question_key
from bot.publisher import Publisher
from bot.routing import Routing
from bot.signals import Signal
from bot.store import Store
from bot.tasks import TaskDirectory, TaskUnknown

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


@dataclass
class Unroutable:
    """A bundle that waits because its route cannot be determined (never posted by default)."""

    reason: str
    attempts: int
    next_try: float  # monotonic time


@dataclass
class SyncReport:
    listed: int = 0
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
    #: Raised by Kandev's push hints (and by this engine itself): look at Kandev now.
    wakeup: Signal
    _: KW_ONLY
    poll_interval: float = 5.0
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

    def __post_init__(self) -> None:
        if self.past is None:
            self.past = PastAnswers(self.store, self.routing)

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.wakeup.take()
            started = time.monotonic()
            wait = self.poll_interval
            try:
                self.reconcile_once()
                self.health.clear("kandev")
                self.health.clear("sync")
                self.health.synced()
                # Polls start every poll_interval, not poll_interval after the previous one
                # ended, so a bundle waits at most one interval to be discovered without push.
                wait = max(self.poll_interval - (time.monotonic() - started), 0.0)
            except KandevAuthError as exc:
                self.health.problem("kandev", str(exc))
                log.error("%s", exc)
            except KandevUnavailable as exc:
                self.health.failure("kandev", "unreachable", exc)
                log.warning("Kandev unavailable: %s", exc)
            except Exception as exc:
                self.health.failure("sync", "sync cycle failed", exc)
                log.exception("sync cycle failed")
            self.wakeup.wait(wait)

    def reconcile_once(self) -> SyncReport:
        report = SyncReport()
        started = self.clock()
        bundles = self.kandev.list_pending()
        report.listed = len(bundles)
        active = {b.pending_id for b in bundles}
        # Bundles already known to have a card are not looked up again: one store read per
        # listed bundle and cycle was most of the bot's CPU with many bundles waiting.
        known = self._known & active
        for bundle in bundles:
            self._missing_since.pop(bundle.pending_id, None)
            if bundle.pending_id in known or not self._due(bundle.pending_id):
                continue
            if self.store.get(bundle.pending_id) is not None:
                known.add(bundle.pending_id)
            elif self._post_new(bundle):
                known.add(bundle.pending_id)
                report.posted.append(bundle.pending_id)
        self._known = known
        self._report_unroutable(active)
        self._recover_unposted()
        for card in self.store.pending():
            if card.pending_id in active or card.created_at >= started:
                continue
            if self._resolve_elsewhere(card):
                report.resolved.append(card.pending_id)
        return report

    # ---- new bundles ---------------------------------------------------------------------

    def _post_new(self, bundle: Bundle) -> bool:
        if not self._complete(bundle):
            threading.Timer(INCOMPLETE_RETRY_S, self.wakeup.raise_).start()
            return False
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
        if (self.clock() - bundle.created_at).total_seconds() > YOUNG_BUNDLE_S:
            return True
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
