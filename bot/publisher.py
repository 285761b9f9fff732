"""Slack writes for cards, made durable: the outbox worker.

Every post and every card edit is first recorded in the store's outbox (deduplicated by key:
one post per bundle, one edit per state change), then performed by this worker. A card is
always rendered from the store's current state at the moment of writing, so a late or retried
write never shows a stale state. Rate limits are honoured (Retry-After) per channel without
blocking other channels, posts are paced per channel (~1/s, Slack's limit), and edits are taken
before posts so a backlog of new cards never starves edits.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from bot import cards
from bot.domain import Card, CardState
from bot.health import Health
from bot.leases import OUTBOX_LEASE_S
from bot.slack.gateway import Message, SlackError, SlackGateway
from bot.store import Store

log = logging.getLogger(__name__)

POST = "post"
UPDATE = "update"

#: Seconds between two posts to one channel (Slack allows about one message per second).
POST_SPACING_S = 1.0
#: How long a worker holds an outbox row before another worker may take it; the LeaseKeeper
#: renews it while this process lives (see leases.py), so only a dead worker's rows expire.
LEASE_S = OUTBOX_LEASE_S
MAX_BACKOFF_S = 60.0
#: ``last_error`` values that prove an earlier take of a post did not reach Slack.
_NOT_SENT = ("", "paced", "ratelimited")


def update_key(card: Card) -> str:
    """The outbox key of the edit of ``card`` to its current state (one edit per state)."""
    return f"update:{card.pending_id}:{card.state.value}"


def card_message(card: Card, kandev_url: str, now: datetime | None = None) -> Message:
    rendered = cards.render_card(
        card.bundle,
        card.task,
        card.state,
        card.outcome,
        kandev_url=kandev_url,
        now=now or datetime.now(UTC),
    )
    return Message(text=rendered["text"], blocks=rendered["blocks"])


class Publisher:
    """Performs the outbox's Slack writes; wake() it after enqueueing."""

    def __init__(
        self,
        store: Store,
        slack: SlackGateway,
        *,
        kandev_url: str,
        health: Health,
        on_card_changed: Callable[[Card], None] | None = None,
        post_spacing_s: float = POST_SPACING_S,
    ):
        self.store = store
        self.slack = slack
        self.kandev_url = kandev_url
        self.health = health
        self.on_card_changed = on_card_changed
        self.post_spacing_s = post_spacing_s
        self.worker_id = f"pub-{uuid.uuid4().hex[:8]}"
        self._wake = threading.Event()
        self._next_post: dict[str, float] = {}
        #: (kind, channel) -> monotonic time before which Slack asked us not to retry. Keyed by
        #: kind too: a 429 on chat.postMessage (1/s per channel) must not hold up card edits.
        self._blocked_until: dict[tuple[str, str], float] = {}
        #: Consecutive transient failures per outbox item (backoff grows with these only, not
        #: with the times an item was merely paced).
        self._failures: dict[int, int] = {}
        #: Monotonic time at which the soonest deferred item falls due (the worker wakes then).
        self._soonest: float | None = None
        #: Paced posts wait their turn: the slot each waiting post was given, and the last slot
        #: given per channel. So a backlog is deferred about once per post, instead of being
        #: taken and deferred again every second (which slowed posting down to ~0.7/s).
        self._slots: dict[int, float] = {}
        self._last_slot: dict[str, float] = {}

    # ---- enqueueing (called by use-cases) ------------------------------------------------

    def enqueue_post(self, card: Card) -> None:
        self.store.outbox_put(
            POST, f"post:{card.pending_id}", {"pending_id": card.pending_id}, channel=card.channel
        )
        self._wake.set()

    def enqueue_update(self, card: Card) -> None:
        """Schedule the edit of a card to its (new) state; once per state."""
        self.store.outbox_put(
            UPDATE,
            update_key(card),
            {"pending_id": card.pending_id},
            channel=card.channel,
        )
        self._wake.set()

    def wake(self) -> None:
        self._wake.set()

    # ---- the worker ----------------------------------------------------------------------

    def run(self, stop: threading.Event, idle_wait_s: float = 1.0) -> None:
        while not stop.is_set():
            try:
                worked = self.work_once()
            except Exception:  # a store outage must not kill the worker
                log.exception("outbox worker failed; retrying")
                self.health.problem("outbox", "store error while processing the outbox")
                worked = False
            if not worked:
                self._wake.wait(self._idle_wait(idle_wait_s))
                self._wake.clear()

    def _idle_wait(self, idle_wait_s: float) -> float:
        """Sleep until the soonest deferred item is due (pacing ~1/s), at most ``idle_wait_s``."""
        now = time.monotonic()
        soonest, self._soonest = self._soonest, None
        turns = [slot for slot in self._slots.values() if slot > now]  # posts waiting in line
        if turns:
            soonest = min(turns) if soonest is None else min(soonest, *turns)
        if len(turns) < len(self._slots):  # forget turns long gone (items another worker took)
            self._slots = {i: t for i, t in self._slots.items() if t > now - LEASE_S}
        if soonest is None:
            return idle_wait_s
        return min(idle_wait_s, max(soonest - now, 0.01))

    def work_once(self, limit: int = 20) -> bool:
        """Process the due outbox items; True when something was done."""
        # The store compares leases with the database's clock (None), never this machine's.
        items = self.store.outbox_take(None, limit=limit, worker_id=self.worker_id, lease_s=LEASE_S)
        if not items:
            return False
        # Edits first: a backlog of new cards never starves the edits of existing ones.
        items.sort(key=lambda it: (it.kind != UPDATE, it.id))
        for item in items:
            self._process(item)
        self.health.clear("outbox")
        return True

    def _process(self, item) -> None:
        now = time.monotonic()
        channel = item.channel or ""
        wait = max(self._blocked_until.get((item.kind, channel), 0.0), 0.0) - now
        if item.kind == POST:
            wait = max(wait, self._post_turn(item.id, channel, now) - now)
        if wait > 0:
            self._defer(item, wait, error=None)
            return
        self._slots.pop(item.id, None)
        card = self.store.get(item.payload["pending_id"])
        if card is None:
            self.store.outbox_done(item.id)
            return
        try:
            if item.kind == POST:
                self._post(card, item)
            else:
                self._update(card)
        except SlackError as exc:
            self._failed(item, card, exc)
            return
        self.store.outbox_done(item.id)
        self._failures.pop(item.id, None)
        self.health.clear("slack")

    def _post_turn(self, item_id: int, channel: str, now: float) -> float:
        """When this post may go: the channel's next free moment, behind the posts already
        waiting in that channel (a waiting post keeps the slot it was given)."""
        free = self._next_post.get(channel, 0.0)
        slot = self._slots.get(item_id)
        if slot is None:
            last = self._last_slot.get(channel, 0.0)
            if free <= now and last <= now:
                return now
            slot = max(free, last + self.post_spacing_s)
            self._slots[item_id] = self._last_slot[channel] = slot
        return max(slot, free)

    def _post(self, card: Card, item) -> None:
        if card.ts:
            return  # already posted (e.g. by another replica)
        if item.last_error not in _NOT_SENT:
            # An earlier attempt may have reached Slack before it failed or the process died.
            oldest = (card.created_at - timedelta(minutes=1)).timestamp()
            found = self.slack.find_card(card.channel, card.pending_id, oldest)
            if found:
                self.store.mark_posted(card.pending_id, card.channel, found)
                self._after_post(card.pending_id, rendered=None)
                return
        self._next_post[card.channel] = time.monotonic() + self.post_spacing_s
        self.store.outbox_note(item.id, "posting")
        ts = self.slack.post_card(
            card.channel, card_message(card, self.kandev_url), card.pending_id
        )
        self.store.mark_posted(card.pending_id, card.channel, ts)
        self._after_post(card.pending_id, rendered=card.state)

    def _after_post(self, pending_id: str, *, rendered: CardState | None) -> None:
        """``rendered``: the state the posted message shows (None: a card found in the channel,
        posted by a process that died before it could record it — most likely still pending)."""
        posted = self.store.get(pending_id)
        if posted is None:
            return
        if posted.state is not CardState.PENDING and posted.state is not rendered:
            # Resolved while it was being posted: its edit was skipped as a no-op (the card had
            # no ts yet; possibly on another replica), so make sure the edit runs now.
            self.enqueue_update(posted)
            self.store.outbox_rearm(update_key(posted))
        self._changed(posted)

    def _update(self, card: Card) -> None:
        if not card.ts:
            return  # the post renders the current state when it happens
        self.slack.update_card(
            card.channel, card.ts, card_message(card, self.kandev_url), card.pending_id
        )
        self._changed(card)

    def _changed(self, card: Card) -> None:
        if self.on_card_changed is not None:
            try:
                self.on_card_changed(card)
            except Exception:
                log.exception("card-changed hook failed")

    def _failed(self, item, card: Card, exc: SlackError) -> None:
        if exc.rate_limited:
            delay = max(exc.retry_after or 1.0, 0.5)
            self._blocked_until[(item.kind, card.channel)] = time.monotonic() + delay
            self.health.problem("slack", f"rate limited on {exc.method}, retrying in {delay:.0f}s")
            self._defer(item, delay, error=exc.error)
        elif exc.transient:
            failures = self._failures[item.id] = self._failures.get(item.id, 0) + 1
            delay = min(2.0 ** (failures - 1), MAX_BACKOFF_S)
            self.health.problem("slack", f"{exc.method} failed ({exc.error}); retrying")
            self._defer(item, delay, error=exc.error)
        elif exc.needs_operator:
            # Kept, not dropped: once someone fixes it the card is posted / edited after all.
            failures = self._failures[item.id] = self._failures.get(item.id, 0) + 1
            delay = min(2.0 ** (failures - 1), MAX_BACKOFF_S)
            problem = f"{exc.method} failed in {card.channel}: {exc.error}; {exc.needs_operator}"
            if failures == 1:
                log.error("%s (will keep retrying)", problem)
            self.health.problem("slack", problem)
            self._defer(item, delay, error=exc.error)
        else:
            log.error("giving up on %s for %s: %s", item.kind, card.pending_id, exc.error)
            self.store.audit(
                card.pending_id, None, f"slack_{item.kind}", "bot", "failed", exc.error
            )
            self.store.outbox_done(item.id)
            self._failures.pop(item.id, None)

    def _defer(self, item, delay_s: float, *, error: str | None) -> None:
        note = error or "paced"
        if item.kind == POST and note in _NOT_SENT and item.last_error not in _NOT_SENT:
            # An earlier take may have reached Slack (timeout, 5xx, crash): being paced or rate
            # limited now proves nothing about it, so keep the mark that makes the next take
            # look for the card in the channel before posting again.
            note = item.last_error
        self.store.outbox_retry(item.id, delay_s, note)
        due = time.monotonic() + delay_s
        self._soonest = due if self._soonest is None else min(self._soonest, due)
