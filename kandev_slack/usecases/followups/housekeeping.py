"""Claims left without a message are posted after all, and old records are purged.

A crash between a bundle's claim and its outbox entry leaves a card nobody posts: such claims
are queued again. Both that lookup and the store's purge (old resolved cards, audit entries,
outbox rows… see kandev_slack/store/retention.py) scan whole tables, so they run every
``UNPOSTED_CHECK_S`` (and at the first full read after start-up), not every cycle.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Protocol

from kandev_slack.core.domain import Card
from kandev_slack.store.retention import Purged

#: Claims left without a message are looked for this often (and after start-up) rather than
#: every cycle: the lookup scans the whole card history and only finds unposted cards over 30 s old.
UNPOSTED_CHECK_S = 30.0
#: A claim this old without a message lost its outbox entry (a fresh one is still being queued).
UNPOSTED_AFTER_S = 30.0


class UnpostedCards(Protocol):
    """What retention reads of the cards (kandev_slack.store.CardsRepository)."""

    def unposted(self, older_than_s: float = 0) -> list[Card]: ...


class Purge(Protocol):
    """The store's purge of old records (kandev_slack.store.Retention)."""

    def purge(self, older_than: timedelta | None = None) -> Purged: ...


class Posts(Protocol):
    def enqueue_post(self, card: Card) -> None: ...


class Housekeeping:
    """Re-queues unposted cards and purges old records, at most every ``every_s``."""

    def __init__(
        self,
        cards: UnpostedCards,
        retention: Purge,
        posts: Posts,
        *,
        every_s: float = UNPOSTED_CHECK_S,
    ) -> None:
        self.cards, self.retention, self.posts, self.every_s = cards, retention, posts, every_s
        self._checked: float | None = None

    def due(self) -> bool:
        now = time.monotonic()
        return self._checked is None or now - self._checked >= self.every_s

    def tick(self) -> int:
        """When due: queue again the cards that never got an outbox entry, then purge. How
        many cards were queued again."""
        if not self.due():
            return 0
        self._checked = time.monotonic()
        unposted = self.cards.unposted(older_than_s=UNPOSTED_AFTER_S)
        for card in unposted:
            self.posts.enqueue_post(card)
        self.retention.purge()  # retention: old resolved cards, audit entries, outbox rows…
        return len(unposted)
