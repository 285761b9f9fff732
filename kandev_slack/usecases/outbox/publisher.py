"""Slack writes for cards, made durable: the outbox worker.

Every post and card edit is first recorded in the outbox (deduplicated by key: one post per
bundle, one edit per state change), then performed here, rendered from the store's state at the
moment of writing (a late or retried write never shows a stale state). Rate limits (Retry-After)
hold back one channel only; posts are paced per channel (~1/s, Slack's limit) through the store,
shared by every replica (store/pace.py); edits go before posts, so new cards never starve them.

Nothing gets stuck: an error on one item (the store, rendering, an unexpected Slack reply) gives
that item, and the rest of its batch, back for a retry with backoff. An item retrying cannot fix
is marked failed, audited and reported in /healthz. A card that cannot be rendered, or that Slack
refuses as too big or malformed, is sent in its plain form (fixed wording, a link to Kandev, the
answer/reject buttons when they fit).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from kandev_slack.core.domain import Card
from kandev_slack.core.outbox import (
    NOT_SENT,
    POST,
    UPDATE,
    UPDATE_COPY,
    copy_update_key,
    group_line_prefix,
    update_key,
)
from kandev_slack.core.signals import Signal
from kandev_slack.core.timing.settled import SETTLED_LOOK_S, Settled
from kandev_slack.ops.backoff import doubling, wait_for
from kandev_slack.ops.health import Health
from kandev_slack.ops.logs import log_context, log_failure
from kandev_slack.slack_api.gateway import SlackError
from kandev_slack.store.cards.copies import Copy
from kandev_slack.store.errors import is_unavailable
from kandev_slack.store.queues.pace import PaceBusy
from kandev_slack.store.records import OutboxEntry
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.groups import GroupEdit
from kandev_slack.usecases.leases import OUTBOX_LEASE_S
from kandev_slack.usecases.outbox.pacing import POST_SPACING_S, NotYourTurn, Pacer
from kandev_slack.usecases.outbox.writes import (
    KINDS,
    Later,
    PublisherCards,
    PublisherOutbox,
    WaitForFirst,
    Write,
    Writes,
    attempt_note,
    paced,
    retry_note,
)

log = logging.getLogger(__name__)

#: How long a worker holds an outbox row before another worker may take it; the LeaseKeeper
#: renews it while this process lives (see leases.py), so only a dead worker's rows expire.
LEASE_S = OUTBOX_LEASE_S
MAX_BACKOFF_S = 60.0
#: Waits before an item that failed is tried again: 1 s, doubling with its consecutive failures.
RETRY_WAIT = doubling(1.0, MAX_BACKOFF_S)
#: After this many consecutive errors (other than the database being unreachable) an item is
#: marked failed instead of being retried again.
GIVE_UP_AFTER = 5
#: Slack refused the message itself (too big, blocks it cannot take): its plain form is sent.
_REFUSED_CONTENT = frozenset({"invalid_blocks", "invalid_blocks_format", "msg_too_long"})
#: Failed items count in /healthz for this long after they failed.
FAILED_SHOWN_S = 24 * 3600.0
#: How often the count of failed items is read again for /healthz.
FAILED_CHECK_S = 60.0
#: A card's group line (another card's change: one joined its thread, or left it) is due this
#: long after the change: the cards' own edits enqueued within it go first. Short: a person
#: clicking card after card (each a few hundred ms apart) finds the last click's line sent
#: before their next click, not during it. In a burst the publisher yields to the urgent work
#: anyway (:data:`GROUP_LINE_YIELD_S`), so the lines pile up meanwhile and one edit of each
#: makes them all (``Publisher._absorb``).
GROUP_LINE_DELAY_S = 0.05
#: Before each write, how long it waits at most for the urgent work in flight (an interaction
#: not yet acknowledged, an answer not yet sent to Kandev: a few ms each): a group line, and
#: any other write (a card's own edit, a post: they wait for an ack, not for a whole crowd).
GROUP_LINE_YIELD_S = 0.25
WRITE_YIELD_S = 0.02


class Enqueue:
    """The outbox's front: what use-cases (and the writes, for the edits a write finds it must
    make after all) call to schedule Slack writes; ``wakes``: the signal the worker waits on."""

    def __init__(
        self,
        outbox: EnqueueOutbox,
        cards: EnqueueCards,
        groups: GroupEdits,
        wakes: Signal,
        changes: Signal | None = None,
        *,
        group_line_delay_s: float = GROUP_LINE_DELAY_S,
    ) -> None:
        self.outbox, self.cards, self.groups = outbox, cards, groups
        self.wakes = wakes
        self.changes = changes  # raised after every post or edit (the Home refresher waits on it)
        #: Other cards' group lines are due this much later than the edits enqueued with them:
        #: the cards' own edits enqueued meanwhile go first, and several changes of one line
        #: are made by one edit (see :meth:`Publisher._absorb`).
        self.group_line_delay_s = group_line_delay_s

    def enqueue_post(self, card: Card) -> None:
        self.outbox.outbox_put(
            POST, f"post:{card.pending_id}", {"pending_id": card.pending_id}, channel=card.channel
        )
        self.wakes.raise_()

    def enqueue_update(self, card: Card, *, reason: str = "") -> None:
        """Schedule the edit of a card to its (new) state — its channel card and every other
        message of it — once per message and state (and ``reason``); a card resolved leaves
        its group, whose waiting members are edited too."""
        payload = {"pending_id": card.pending_id}
        self.outbox.outbox_put(UPDATE, update_key(card, reason), payload, channel=card.channel)
        for copy in self.cards.messages_of(card.pending_id):
            self.enqueue_copy_update(card, copy, reason)
        if card.state.terminal and not reason:
            self.enqueue_group(self.groups.edits_when_resolved(card))
        self.wakes.raise_()

    def enqueue_group(self, edits: Sequence[GroupEdit]) -> None:
        """Schedule the edits of channel cards whose group changed (once per reason), of low
        priority: due :attr:`group_line_delay_s` later."""
        for edit in edits:
            card = edit.card
            payload = {"pending_id": card.pending_id}
            key = update_key(card, edit.reason)
            self.outbox.outbox_put(
                UPDATE, key, payload, channel=card.channel, delay_s=self.group_line_delay_s
            )
        if edits:
            self.wakes.raise_()

    def enqueue_copy_update(self, card: Card, copy: Copy, reason: str = "") -> None:
        """Schedule the edit of one of the card's other messages to the card's state."""
        self.outbox.outbox_put(
            UPDATE_COPY,
            copy_update_key(card, copy.key, reason),
            {"pending_id": card.pending_id, "key": copy.key},
            channel=copy.channel or copy.target,
        )
        self.wakes.raise_()

    def changed(self) -> None:
        """A card's message was posted or edited (the Home refresher waits on ``changes``)."""
        if self.changes is not None:
            self.changes.raise_()

    def wake(self) -> None:
        self.wakes.raise_()


class Publisher:
    """Performs the outbox's Slack writes; wake() it after enqueueing. Its parts are built by
    the composition root (kandev_slack/wiring.py, ``build_publisher``): ``queue`` (whose
    ``wakes`` the worker waits on), the ``writes`` (which schedule follow-up edits on that
    ``queue``) and the ``pacer``."""

    def __init__(
        self,
        outbox: PublisherOutbox,
        cards: PublisherCards,
        audit_log: Audit,
        queue: Enqueue,
        writes: Writes,
        pacer: Pacer,
        *,
        health: Health,
        post_spacing_s: float = POST_SPACING_S,
        give_up_after: int = GIVE_UP_AFTER,
        urgency: Yielding | None = None,
        store_writes: Callable[[], int] | None = None,
    ):
        self.outbox, self.cards, self.audit_log = outbox, cards, audit_log
        #: The store's count of this process's changing writes (None: an idle worker looks
        #: every ``idle_wait_s``): idle and settled, it looks again when this moves, when an
        #: item falls due, or every SETTLED_LOOK_S (another replica's items).
        self.store_writes = store_writes
        #: The urgent work in flight each write waits for first (None: none, e.g. tests).
        self.urgency = urgency
        self.queue, self.writes, self.pacer = queue, writes, pacer
        self.health = health
        self.post_spacing_s = post_spacing_s
        self.give_up_after = give_up_after
        self.worker_id = f"pub-{uuid.uuid4().hex[:8]}"
        self._wake = queue.wakes
        #: (kind, channel) -> monotonic time before which Slack asked us not to retry. Keyed by
        #: kind too: a 429 on chat.postMessage (1/s per channel) must not hold up card edits.
        self._blocked_until: dict[tuple[str, str], float] = {}
        #: Consecutive transient failures per outbox item (backoff grows with these only, not
        #: with the times an item was merely paced).
        self._failures: dict[int, int] = {}
        #: Monotonic time at which the soonest deferred item falls due (the worker wakes then).
        self._soonest: float | None = None
        #: Items of the current batch not yet settled (done, failed or given back).
        self._unsettled: dict[int, OutboxEntry] = {}
        #: Items of the current batch an edit of their card covered (done already).
        self._absorbed: set[int] = set()
        self._failed_checked: float | None = None
        self._stop = threading.Event()

    # ---- enqueueing (called by use-cases; the queue's) -----------------------------------

    def enqueue_post(self, card: Card) -> None:
        self.queue.enqueue_post(card)

    def enqueue_update(self, card: Card, *, reason: str = "") -> None:
        self.queue.enqueue_update(card, reason=reason)

    def enqueue_group(self, edits: Sequence[GroupEdit]) -> None:
        self.queue.enqueue_group(edits)

    def enqueue_copy_update(self, card: Card, copy: Copy, reason: str = "") -> None:
        self.queue.enqueue_copy_update(card, copy, reason)

    def changed(self) -> None:
        self.queue.changed()

    def wake(self) -> None:
        self.queue.wake()

    # ---- the worker ----------------------------------------------------------------------

    def run(self, stop: threading.Event, idle_wait_s: float = 1.0) -> None:
        self._stop = stop  # a batch stops between two items once it is set (hand-over)
        look_first = False
        settled: Settled | None = None  # idle: what the last look found, and when
        while not stop.is_set():
            # Cleared before looking, so a wake() while this pass looks (or after it found
            # nothing) ends the wait below at once instead of being lost.
            self._wake.take()
            due_s: float | None = None
            known = False  # due_s is the store's answer of this pass
            try:
                self._check_failed()
                if not look_first:  # a start or a wake: something changed
                    settled = None
                    worked = self.work_once()
                elif settled is not None and not settled.moved(self.store_writes, SETTLED_LOOK_S):
                    worked, known, due_s = False, True, settled.left_s()
                else:
                    # Idle, woken by the clock: a read says whether a take (a write
                    # transaction) would find anything, which it mostly would not.
                    seen = self.store_writes() if self.store_writes is not None else None
                    due_s = self.outbox.outbox_next_due_s(leased=True)
                    self.health.clear("outbox")  # the store answered
                    worked = due_s == 0.0 and self.work_once()
                    known = due_s != 0.0
                    settled = None
                    if known and seen is not None:
                        settled = Settled(seen, time.monotonic(), due_s)
            except Exception:  # a store outage must not kill the worker
                log_failure(log, "outbox worker failed; retrying")
                self.health.problem("outbox", "store error while processing the outbox")
                worked, settled = False, None
            if not worked:
                woken = self._wake.wait(self._idle_wait(idle_wait_s, due_s, ask=not known))
                look_first = not woken
            else:
                look_first = False

    def _idle_wait(
        self, idle_wait_s: float, due_s: float | None = None, *, ask: bool = True
    ) -> float:
        """Sleep until the soonest deferred item is due (pacing ~1/s), at most ``idle_wait_s``:
        this worker's own, or one another replica deferred (its posting slot comes whether or
        not that replica still runs). ``ask`` False: ``due_s`` is what the store just said."""
        now = time.monotonic()
        soonest, self._soonest = self._soonest, None
        if ask:
            try:
                due_s = self.outbox.outbox_next_due_s()
            except Exception:  # the store is away: wake at this worker's own times
                log.debug("could not read when the next outbox item is due", exc_info=True)
                due_s = None
        if due_s is not None:
            soonest = now + due_s if soonest is None else min(soonest, now + due_s)
        if soonest is None:
            return idle_wait_s
        return min(idle_wait_s, max(soonest - now, 0.01))

    def holds_leases(self) -> bool:
        """Whether this worker holds outbox items now (a batch not settled yet): their leases
        are renewed by the heartbeat. Between batches it holds none (each item of a batch is
        done, failed or given back before the next take)."""
        return bool(self._unsettled)

    def work_once(self, limit: int = 20) -> bool:
        """Process the due outbox items; True when something was done."""
        self._release_unsettled()
        # The store compares leases with the database's clock (None), never this machine's.
        items = self.outbox.outbox_take(
            None, limit=limit, worker_id=self.worker_id, lease_s=LEASE_S
        )
        if not items:
            self.health.clear("outbox")  # the store answered: an earlier store error is over
            return False
        # Edits first: a backlog of new cards never starves the edits of existing ones; a
        # card's own edit before other cards' group lines.
        items.sort(key=priority)
        self._unsettled = {item.id: item for item in items}
        self._absorbed = set()
        for item in items:
            if self._stop.is_set():
                break  # the rest is handed over (given back to nobody) as this replica stops
            if item.id in self._absorbed:  # done: an edit of its card made it already
                del self._unsettled[item.id]
                continue
            self._yield(item)
            try:
                with log_context(pending_id=item.payload.get("pending_id"), channel=item.channel):
                    self._process(item)
            except Exception as exc:  # this item only: the others still go out
                self._errored(item, exc)
            del self._unsettled[item.id]
        self.health.clear("outbox")
        return True

    def _yield(self, item: OutboxEntry) -> None:
        """Before a write: the urgent work in flight goes first (a bounded wait)."""
        if self.urgency is None:
            return
        if is_group_line(item):
            self.urgency.wait_quiet(GROUP_LINE_YIELD_S, "group_line")
        else:
            self.urgency.wait_quiet(WRITE_YIELD_S, "card_edit")

    def _absorb(self, item: OutboxEntry) -> None:
        """A card's group line is about to be rendered from the card's current state (read
        after this): every other waiting change of that line is covered by this one edit —
        finished as done ("absorbed") instead of sent again, in this batch and after it."""
        prefix = group_line_prefix(item.key or "", str(item.payload["pending_id"]))
        if prefix is not None:
            self._absorbed.update(self.outbox.outbox_absorb(prefix, item.id, self.worker_id))

    def _release_unsettled(self) -> None:
        """Give back the items of a batch an error interrupted (e.g. the database went away
        while one was being given back), so they are retried instead of staying leased."""
        for item in list(self._unsettled.values()):
            self.outbox.outbox_retry(
                item.id,
                self._backoff(item.id),
                retry_note(item, "interrupted"),
                worker_id=self.worker_id,
            )
            del self._unsettled[item.id]

    def _process(self, item: OutboxEntry) -> None:
        channel = item.channel or ""
        wait = self._blocked_until.get((item.kind, channel), 0.0) - time.monotonic()
        if wait > 0:
            self._defer(item, wait, error=None)
            return
        kind = KINDS.get(item.kind)
        if kind is None:
            self._give_up(item, f"unknown outbox item kind {item.kind!r}")
            return
        card: Card | None = None
        if kind.alone is None:  # a write of one card's: planned from its current state
            card = self.cards.get(item.payload["pending_id"])
            if card is None:
                self.outbox.outbox_done(item.id, worker_id=self.worker_id)
                return
            if kind.after_card and not card.ts and not card.state.terminal:
                self._defer(item, self.post_spacing_s, error=None)  # after the channel card
                return
            if is_group_line(item):
                self._absorb(item)
        try:
            if kind.alone is not None:
                write = kind.alone(self.writes, item)
            else:
                assert card is not None
                write = kind.plan(self.writes, card, item)
            if write is not None:
                self._send(item, card, write, paced=kind.paced)
        except Later as later:
            self._defer(item, later.wait_s, error=None)
            return
        except NotYourTurn as wait:
            self._defer(item, wait.turn.wait_s, error=None, slot=wait.turn.at)
            return
        except WaitForFirst:  # in the thread of a card being posted: after it
            self._defer(item, self.post_spacing_s, error=None)
            return
        except PaceBusy as busy:  # never waited for: other channels and edits go on
            self.pacer.locked(busy.channel)
            wait_s, keep = self.pacer.locked_wait(item.slot_at, datetime.now(UTC))
            self._defer(item, wait_s, error=None, holding=keep)
            return
        except _LostLease:
            log.warning("outbox item %s (%s): lease lost, left to its new holder", item.id, kind)
            return
        except SlackError as exc:
            self._failed(item, card, exc)
            return
        self.outbox.outbox_done(item.id, worker_id=self.worker_id)
        self._failures.pop(item.id, None)
        self.health.clear("slack")

    def _send(self, item: OutboxEntry, card: Card | None, write: Write, *, paced: bool) -> None:
        """The one send path of every kind: an earlier attempt that reached Slack is recorded
        instead of sent again; a paced kind takes its turn (before rendering: a waiting post is
        not rendered); a message Slack refuses is sent in its plain form."""
        # An earlier attempt may have reached Slack before it failed or the process died.
        earlier = write.made_earlier
        if earlier is not None and item.last_error not in NOT_SENT and earlier():
            return
        if paced:
            self.pacer.take_turn(write.channel, follow=item.kind != POST, held=item.slot_at)
        message, plain = write.render()
        # The fence, right before the call: still this worker's (owner and expiry, in the
        # statement that notes the attempt), else a worker frozen past its lease stops here.
        if not self.outbox.outbox_note(item.id, attempt_note(item), worker_id=self.worker_id):
            raise _LostLease()
        try:
            ts = write.send(message)
        except SlackError as exc:
            if plain or write.plain is None or exc.error not in _REFUSED_CONTENT or card is None:
                raise
            # Refused, so not written: its plain form goes instead.
            if card is not None:
                self.writes.audit_plain(card, item.kind, f"slack refused the card: {exc.error}")
            else:
                log.warning("slack refused a %s (%s): its plain form goes", item.kind, exc.error)
            ts = write.send(write.plain())
        write.done(ts)

    def _failed(self, item: OutboxEntry, card: Card | None, exc: SlackError) -> None:
        if exc.rate_limited:
            delay = max(exc.retry_after or 1.0, 0.5)
            channel = item.channel or (card.channel if card else "")
            self._blocked_until[(item.kind, channel)] = time.monotonic() + delay
            if paced(item.kind):  # every replica holds off posting there
                self.pacer.block(channel, delay)
            self.health.problem("slack", f"rate limited on {exc.method}, retrying in {delay:.0f}s")
            self._defer(item, delay, error=exc.error)
        elif exc.transient:
            failures = self._failures[item.id] = self._failures.get(item.id, 0) + 1
            delay = wait_for(RETRY_WAIT, failures)
            self.health.problem("slack", f"{exc.method} failed ({exc.error}); retrying")
            self._defer(item, delay, error=exc.error)
        elif exc.needs_operator:
            # Kept, not dropped: once someone fixes it the card is posted / edited after all.
            failures = self._failures[item.id] = self._failures.get(item.id, 0) + 1
            delay = wait_for(RETRY_WAIT, failures)
            where = item.channel or (card.channel if card else "")
            problem = f"{exc.method} failed in {where}: {exc.error}; {exc.needs_operator}"
            if failures == 1:
                log.error("%s (will keep retrying)", problem)
            self.health.problem("slack", problem)
            self._defer(item, delay, error=exc.error)
        else:
            self._give_up(item, f"{exc.method}: {exc.error}")

    def _errored(self, item: OutboxEntry, exc: Exception) -> None:
        """An error other than Slack's answer: give the item back with backoff, or mark it
        failed once it keeps failing (a database that is unreachable is waited for)."""
        waiting = is_unavailable(exc)
        failures = self._failures.get(item.id, 0) + (0 if waiting else 1)
        if failures >= self.give_up_after:
            log.error("giving up on outbox item %s after %d errors", item.id, failures)
            self._give_up(item, f"error: {type(exc).__name__}")
            return
        log_failure(log, "outbox item %s (%s) failed; retrying", item.id, item.kind)
        self._failures[item.id] = failures
        self.health.problem("outbox", f"a card {item.kind} failed with an error; retrying")
        # "error" proves nothing about a post: it is looked up before it is sent again.
        self._defer(item, self._backoff(item.id), error="error")

    def _give_up(self, item: OutboxEntry, why: str) -> None:
        """Retrying cannot fix it: mark the item failed (never retried), audit, report."""
        pending_id = item.payload.get("pending_id")
        pending_id = pending_id if isinstance(pending_id, str) else None
        if not self.outbox.outbox_fail(item.id, why, worker_id=self.worker_id):
            return  # no longer this worker's: its new holder decides
        log.error("giving up on %s of %s: %s", item.kind, pending_id, why)
        self._failures.pop(item.id, None)
        self.audit_log.audit(pending_id, None, f"slack_{item.kind}", "bot", "failed", why)
        self._check_failed(force=True)

    def _check_failed(self, *, force: bool = False) -> None:
        """Keep /healthz's count of recently failed card posts/edits current."""
        now = time.monotonic()
        checked = self._failed_checked
        if not force and checked is not None and now - checked < FAILED_CHECK_S:
            return
        self._failed_checked = now
        failed = self.outbox.outbox_failed_count(within_s=FAILED_SHOWN_S)
        if failed:
            self.health.problem("cards", f"{failed} card posts/edits failed")
        else:
            self.health.clear("cards")

    def _backoff(self, entry_id: int) -> float:
        """Seconds before the next try: doubling with the item's consecutive failures."""
        return wait_for(RETRY_WAIT, self._failures.get(entry_id, 0))

    def _defer(
        self,
        item: OutboxEntry,
        delay_s: float,
        *,
        error: str | None,
        slot: datetime | None = None,
        holding: datetime | None = None,
    ) -> None:
        """Give ``item`` back for ``delay_s``; ``slot``: its posting slot (the database's time,
        ``delay_s`` from the database's now), which it keeps; ``holding``: the slot it keeps
        while it waits ``delay_s`` (its channel's pace row was locked)."""
        note = retry_note(item, error or "paced")
        if slot is None:
            self.outbox.outbox_retry(
                item.id, delay_s, note, worker_id=self.worker_id, holding=holding
            )
        else:
            self.outbox.outbox_retry(item.id, slot, note, worker_id=self.worker_id, slot=True)
        due = time.monotonic() + delay_s
        self._soonest = due if self._soonest is None else min(self._soonest, due)


def is_group_line(item: OutboxEntry) -> bool:
    """Whether ``item`` is the edit of a card's group line (another card joined or left its
    thread, the card waiting or not), not of the card's own state."""
    pending_id = item.payload.get("pending_id")
    return (
        item.kind == UPDATE
        and isinstance(pending_id, str)
        and group_line_prefix(item.key or "", pending_id) is not None
    )


def priority(item: OutboxEntry) -> tuple[int, int, datetime, int]:
    """The order of a batch: edits before posts (a backlog of new cards never starves the
    edits of existing ones), a card's own edit before other cards' group lines, then the
    oldest due first."""
    rank = KINDS[item.kind].rank if item.kind in KINDS else 3
    return (rank, 1 if is_group_line(item) else 0, item.not_before, item.id)


class Yielding(Protocol):
    """The urgent work in flight (kandev_slack.ops.urgency.Urgency)."""

    def wait_quiet(self, max_s: float, what: str = "followup") -> float: ...


class EnqueueOutbox(Protocol):
    """What enqueueing calls on the outbox (kandev_slack.store.OutboxRepository)."""

    def outbox_put(
        self,
        kind: str,
        key: str | None,
        payload: dict[str, Any],
        channel: str | None = None,
        not_before: datetime | None = None,
        *,
        delay_s: float = 0.0,
    ) -> int | None: ...


class EnqueueCards(Protocol):
    """What enqueueing calls on the cards (kandev_slack.store.CardsRepository)."""

    def messages_of(self, pending_id: str) -> list[Copy]: ...


class GroupEdits(Protocol):
    """The edits a resolved card's group needs (kandev_slack.usecases.groups.GroupLines)."""

    def edits_when_resolved(self, card: Card) -> list[GroupEdit]: ...


class _LostLease(Exception):
    """This worker no longer holds the item's lease: it stops without side effects."""
