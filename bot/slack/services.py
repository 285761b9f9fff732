"""What the Slack listeners need, in one object, and how they tell one person something."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.answers import AnswerService, Verdict
from bot.domain import Card
from bot.kandev.client import KandevClient
from bot.publisher import Publisher
from bot.slack.gateway import SlackError, SlackGateway
from bot.store import Store
from bot.sync import SyncEngine

if TYPE_CHECKING:
    from bot.home import HomeService
    from bot.listing import ListingService

log = logging.getLogger(__name__)

#: How long a modal submission waits for Kandev before acking (Slack allows 3 s in all).
SUBMIT_BUDGET_S = 2.0


@dataclass
class Services:
    store: Store
    kandev: KandevClient
    slack: SlackGateway
    answers: AnswerService
    publisher: Publisher
    sync: SyncEngine
    kandev_public_url: str
    listing: ListingService | None = None  # /kandev-questions (bot/listing.py)
    home: HomeService | None = None  # the App Home tab (bot/home.py)
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=8, thread_name_prefix="submit")
    )

    def card_at(self, channel: str | None, ts: str | None) -> Card | None:
        """The card posted at (channel, ts), as the store knows it."""
        if not channel or not ts:
            return None
        return self.store.by_message(channel, ts)

    def tell(
        self,
        user: str,
        text: str,
        *,
        channel: str | None = None,
        response_url: str | None = None,
        blocks: list[dict[str, Any]] | None = None,
    ) -> None:
        """An ephemeral message to one person: in the channel, else via the response_url."""
        if not text:
            return
        if channel:
            try:
                self.slack.post_ephemeral(channel, user, text, blocks)
                return
            except SlackError as exc:
                log.warning("ephemeral to %s in %s failed: %s", user, channel, exc.error)
        if response_url:
            try:
                self.slack.respond(response_url, text, blocks)
                return
            except SlackError as exc:
                log.warning("response_url for %s failed: %s", user, exc.error)
        log.error("could not tell %s: %s", user, text)

    def tell_verdict(
        self, user: str, verdict: Verdict, *, channel: str | None, response_url: str | None
    ) -> None:
        where = verdict.card.channel if verdict.card is not None and verdict.card.ts else channel
        self.tell(user, verdict.message, channel=where, response_url=response_url)
