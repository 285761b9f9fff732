"""Cards a lost database forgot: a bundle older than this process, with no card in the store,
may have had its card posted by a process whose database was lost since (the SQLite file
deleted, see kandev_slack/store/sql/sqlite_file.py) or restored from a backup. Before such a card
is posted,
its channel is searched for it by its message metadata, as after a crash: found, it is adopted
(recorded, audited, logged), never posted a second time.

One history scan per channel serves every such bundle (a database lost with a hundred
questions waiting is one scan, not a hundred); each bundle is looked for once per process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from kandev_slack.core.domain import Card
from kandev_slack.slack_api.errors import SlackError
from kandev_slack.usecases.audit import Audit

log = logging.getLogger(__name__)

#: A bundle created before the process started (Kandev's clock may run ahead of ours by up to
#: this) may have had its card posted by a process whose database was lost or restored since.
MARGIN = timedelta(minutes=1)

#: The cards in a channel since a time (unix seconds): pending id → ts (SlackGateway.cards_in).
CardsIn = Callable[[str, float], dict[str, str]]


class ForgottenCards:
    def __init__(self, cards_in: CardsIn, audit_log: Audit, started_at: datetime | None) -> None:
        self._cards_in = cards_in
        self._audit_log = audit_log
        #: When this process started (None: never look).
        self.started_at = started_at
        #: The bundles looked for here (and not found).
        self._looked: set[str] = set()
        #: Per channel: from when its history was scanned, and the cards found.
        self._scanned: dict[str, tuple[float, dict[str, str]]] = {}

    def find(self, card: Card) -> str | None:
        """The ts of ``card``'s message already in its channel, when its bundle is older than
        this process (else None without a look). A search Slack refuses for good is said (a
        warning) and counts as nothing found: the card is posted."""
        created = card.item.created_at
        if self.started_at is None or created >= self.started_at + MARGIN:
            return None
        if card.pending_id in self._looked:
            return None
        oldest = (min(created, card.created_at) - MARGIN).timestamp()
        try:
            found = self._scan(card.channel, oldest).get(card.pending_id)
        except SlackError as exc:
            if exc.transient:
                raise  # looked for again on the next take
            log.warning("cannot look for an earlier card of %s: %s", card.pending_id, exc.error)
            found = None
        self._looked.add(card.pending_id)
        if found:
            log.warning("the card of %s was in %s already: adopted", card.pending_id, card.channel)
            self._audit_log.audit(card.pending_id, None, "slack_post", "bot", "adopted", found)
        return found

    def _scan(self, channel: str, oldest: float) -> dict[str, str]:
        """The cards in ``channel`` since ``oldest``: scanned once, again only to look further
        back."""
        scanned = self._scanned.get(channel)
        if scanned is None or oldest < scanned[0]:
            scanned = (oldest, self._cards_in(channel, oldest))
            self._scanned[channel] = scanned
        return scanned[1]
