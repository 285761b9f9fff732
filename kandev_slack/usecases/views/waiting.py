"""What is waiting for an answer: Kandev's active list (the truth) joined with the bot's cards.

Shared by the listing (``/kandev-questions``), the App Home tab and the admission step (a
bundle Kandev lists but the bot has not posted yet can still be answered from the list).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass
from datetime import UTC, datetime

from kandev_slack.config.routing import Routing
from kandev_slack.core.approval import APPROVAL_PREFIX
from kandev_slack.core.clarification import Bundle
from kandev_slack.core.domain import Card, CardState, TaskInfo
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevError
from kandev_slack.kinds.registry import spec_of
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.store import CardsRepository
from kandev_slack.surfaces.waiting import Waiting
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.tasks import TaskDirectory, TaskUnknown

log = logging.getLogger(__name__)


class Permalinks:
    """``chat.getPermalink`` results, remembered (a message's permalink never changes)."""

    def __init__(self, slack: SlackGateway, max_entries: int = 4096):
        self._slack = slack
        self._max = max_entries
        self._lock = threading.Lock()
        self._known: OrderedDict[tuple[str, str], str] = OrderedDict()

    def get(self, channel: str, ts: str) -> str | None:
        key = (channel, ts)
        with self._lock:
            if key in self._known:
                self._known.move_to_end(key)
                return self._known[key]
        link = self._slack.permalink(channel, ts)
        if link:
            with self._lock:
                self._known[key] = link
                while len(self._known) > self._max:
                    self._known.popitem(last=False)
        return link

    def of(self, card: Card) -> str | None:
        return self.get(card.channel, card.ts) if card.ts else None


@dataclass(eq=False)
class WaitingQueue:
    kandev: KandevClient
    cards: CardsRepository
    routing: Routing
    tasks: TaskDirectory
    permalinks: Permalinks
    answerers: Answerers
    _: KW_ONLY
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def waiting(self, workspace_id: str | None = None) -> list[Waiting]:
        """Every bundle Kandev lists as active, in Kandev's order (oldest first), with its task
        (cards are attached to the shown items only, by :meth:`shown`). Raises
        KandevUnavailable / KandevAuthError / KandevError when Kandev cannot say."""
        bundles = self.kandev.list_pending(workspace_id=workspace_id)
        # One read of the waiting cards' tasks (not of whole cards: with 1,000 waiting, the
        # command's ack would wait for the decoding), instead of one read per bundle.
        tasks = self.cards.pending_tasks()
        joined = (self._join(b, tasks.get(b.pending_id)) for b in bundles)
        return [item for item in joined if item is not None]

    def visible_to(self, user_id: str, items: Iterable[Waiting]) -> list[Waiting]:
        """The items this person may answer (and so see): nobody sees another route's
        questions, their titles or prompts."""
        return [i for i in items if self.answerers.may_answer(i.task, user_id)]

    def resolved_visible_to(self, user_id: str, cards: Iterable[Card]) -> list[Card]:
        """Resolved cards whose route lets this person answer: who answered what stays
        within the route."""
        return [c for c in cards if self.answerers.may_answer(c.task, user_id)]

    def posted_pending(self) -> list[Waiting]:
        """What the bot last knew was waiting (its pending, posted cards): for when Kandev
        cannot be reached."""
        return [
            Waiting(bundle=c.bundle, task=c.task, card=c)
            for c in self.cards.pending()
            if c.ts and spec_of(c).listed_as_question
        ]

    def approvals_for(self, user_id: str) -> list[tuple[Card, str | None]]:
        """The approvals waiting that this person may answer (posted cards, oldest first),
        each with its card's permalink."""
        cards = self.cards.pending_of_kind(APPROVAL_PREFIX)
        mine = [c for c in cards if c.ts and self.answerers.may_answer(c.task, user_id)]
        return [(c, self.permalinks.of(c)) for c in mine]

    def shown(self, items: Iterable[Waiting]) -> list[Waiting]:
        """The items a page shows, each with its card (when posted) and the card's permalink."""
        out = []
        for item in items:
            card = item.card or self.cards.get(item.bundle.pending_id)
            card = card if card is not None and card.state is CardState.PENDING else None
            link = self.permalinks.of(card) if card is not None else None
            out.append(Waiting(item.bundle, item.task, card, link))
        return out

    def card_for(self, pending_id: str) -> Card | None:
        """The bot's card for a bundle, or, for a bundle Kandev lists but the bot has not posted
        (yet), a card built from Kandev's list (not stored). None when neither knows it."""
        card = self.cards.get(pending_id)
        if card is not None:
            return card
        try:
            bundle = next(
                (b for b in self.kandev.list_pending() if b.pending_id == pending_id), None
            )
            if bundle is None:
                return None
            task = self.tasks.info(bundle.task_id)
        except (KandevError, TaskUnknown) as exc:
            # Its route decides who may answer: without it, nobody may (fail closed).
            log.warning("cannot look up bundle %s in Kandev: %s", pending_id, exc)
            return None
        route = self.routing.route_for(task)
        return Card(
            pending_id=bundle.pending_id,
            task_id=bundle.task_id,
            session_id=bundle.session_id,
            workspace_id=task.workspace_id,
            channel=route.channel if route else "",
            state=CardState.PENDING,
            item=bundle,
            task=task,
            created_at=bundle.created_at,
            updated_at=self.clock(),
        )

    def _join(self, bundle: Bundle, task: TaskInfo | None) -> Waiting | None:
        """The bundle with its task (its card's, when posted); None (left out) when its task,
        and so its route, cannot be determined."""
        if task is not None:
            return Waiting(bundle=bundle, task=task)
        try:
            return Waiting(bundle=bundle, task=self.tasks.info(bundle.task_id))
        except TaskUnknown as exc:
            log.warning("not listing bundle %s: %s", bundle.pending_id, exc.reason)
            return None
