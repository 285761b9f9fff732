"""USE-CASE: the whole text of an approval, beyond what its full view holds: posted in the
card's thread as consecutive code-block replies, through the outbox (durable, paced, and
once: a second click, or another person's, enqueues nothing new).

The full view (kandev_slack/kinds/approval/cards/view.py) shows the whole command when it fits
a modal; when it does not, it shows the start and the end and points here.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from kandev_slack.core.domain import Card
from kandev_slack.core.outbox import REPLY, reply_key
from kandev_slack.kinds.approval.cards.view import fits_view, thread_parts
from kandev_slack.kinds.registry import spec_of

log = logging.getLogger(__name__)


class ReplyOutbox(Protocol):
    """What this needs of the outbox (kandev_slack.store.OutboxRepository)."""

    def outbox_put(
        self, kind: str, key: str | None, payload: dict[str, Any], channel: str | None = None
    ) -> int | None: ...


class WholeText:
    def __init__(self, outbox: ReplyOutbox | None) -> None:
        self.outbox = outbox  # None: no thread to post in (the view points to Kandev)

    def in_thread(self, card: Card) -> bool:
        """Whether ``card``'s approval needs its thread for the whole text, and the thread is
        there to hold it (a posted card still waiting): then its parts are enqueued (once)
        and True is returned."""
        if not spec_of(card).needs_thread_for_whole_text(card, fits_view):
            return False
        if self.outbox is None or not card.ts or card.state.terminal:
            return False
        parts = thread_parts(card.approval)
        for index, text in enumerate(parts):
            key = f"whole:{card.pending_id}:{index + 1}"
            payload = {"pending_id": card.pending_id, "key": key, "text": text}
            self.outbox.outbox_put(REPLY, reply_key(key), payload, card.channel)
        log.info("whole text of %s: %d parts for its thread", card.pending_id, len(parts))
        return True
