"""What is waiting for an answer: Kandev's active list (the truth) joined with the bot's cards.

Shared by the listing (``/kandev-questions``), the App Home tab and the admission step (a
bundle Kandev lists but the bot has not posted yet can still be answered from the list).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import KW_ONLY, dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

from kandev_slack.config.routing import Routing
from kandev_slack.core.approval import APPROVAL_PREFIX
from kandev_slack.core.clarification import ListedBundle
from kandev_slack.core.domain import Card, CardState, TaskInfo
from kandev_slack.core.groups import GroupPlace
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevError
from kandev_slack.kinds.registry import spec_of
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.store import CardsRepository
from kandev_slack.surfaces.waiting import Waiting
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.groups import group_key
from kandev_slack.usecases.tasks import TaskDirectory, TaskUnknown
from kandev_slack.usecases.views.seeing import S, Seeing, Seen, Sight, unlimited

log = logging.getLogger(__name__)


class Permalinks:
    """``chat.getPermalink`` results, remembered (a message's permalink never changes)."""

    def __init__(self, slack: SlackGateway, max_entries: int = 4096):
        self._slack = slack
        self._max = max_entries
        self._lock = threading.Lock()
        self._known: OrderedDict[tuple[str, str], str] = OrderedDict()

    def get(self, channel: str, ts: str, *, strict: bool = False) -> str | None:
        """``strict``: raise when Slack may give the link later (rate limited), instead of
        None (SlackGateway.permalink)."""
        key = (channel, ts)
        with self._lock:
            if key in self._known:
                self._known.move_to_end(key)
                return self._known[key]
        link = self._slack.permalink(channel, ts, strict=strict)
        if link:
            with self._lock:
                self._known[key] = link
                while len(self._known) > self._max:
                    self._known.popitem(last=False)
        return link

    def of(self, card: Card, *, strict: bool = False) -> str | None:
        return self.get(card.channel, card.ts, strict=strict) if card.ts else None


class SharedReads:
    """Reads of Kandev's list that overlap share one: who asks while a read of the same part
    (``key``) runs waits for it and takes its result, or its error, instead of asking Kandev
    again. Its answer is as fresh as one read that came a little earlier. With 1,000 waiting a
    read costs Kandev ~0.4 s of CPU, so 20 people listing within 2 s made it read 20 times on
    CPUs the bot shares (the bench's slash commands among 1,000 waiting)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str | None, Future[list[ListedBundle]]] = {}
        #: How many asked while a read ran and took its result (since the start).
        self.joined = 0

    def read(self, key: str | None, read: Callable[[], list[ListedBundle]]) -> list[ListedBundle]:
        with self._lock:
            running = self._running.get(key)
            if running is not None:
                self.joined += 1
            else:
                mine: Future[list[ListedBundle]] = Future()
                self._running[key] = mine
        if running is not None:
            return running.result()
        try:
            listed = read()
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        else:
            mine.set_result(listed)
            return listed
        finally:
            with self._lock:
                del self._running[key]


@dataclass(eq=False)
class WaitingQueue:
    kandev: KandevClient
    cards: CardsRepository
    routing: Routing
    tasks: TaskDirectory
    permalinks: Permalinks
    answerers: Answerers
    #: Overlapping reads of the list share one.
    reads: SharedReads
    _: KW_ONLY
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    #: What each person's own Kandev account lets their views show (issue 32); None: every
    #: view shows what the route lets the person answer.
    seeing: Seeing | None = None

    def sight_of(self, user_id: str) -> Sight:
        """What ``user_id``'s views show (build it once per view: see
        kandev_slack/usecases/views/seeing.py)."""
        return self.seeing.sight(user_id) if self.seeing is not None else unlimited(user_id)

    def waiting(self, workspace_id: str | None = None) -> list[Waiting]:
        """Every bundle Kandev lists as active, in Kandev's order (oldest first), with its task
        (cards are attached to the shown items only, by :meth:`shown`). Raises
        KandevUnavailable / KandevAuthError / KandevError when Kandev cannot say."""
        return self.joined(self.listed(workspace_id))

    def listed(self, workspace_id: str | None = None) -> list[ListedBundle]:
        """Kandev's list of the active bundles (of one workspace), in Kandev's order: the
        part of :meth:`waiting` that waits for Kandev (overlapping reads share one). Raises
        as :meth:`waiting` does."""
        return self.reads.read(
            workspace_id, lambda: self.kandev.list_listed(workspace_id=workspace_id)
        )

    def joined(self, bundles: Sequence[ListedBundle]) -> list[Waiting]:
        """``bundles`` (:meth:`listed`) with their tasks: the part of :meth:`waiting` that
        computes."""
        # One read of the waiting cards' tasks (not of whole cards: with 1,000 waiting, the
        # command's ack would wait for the decoding), instead of one read per bundle.
        tasks = self.cards.pending_tasks()
        joined = (self._join(b, tasks.get(b.pending_id)) for b in bundles)
        return [item for item in joined if item is not None]

    def visible_to(
        self, user_id: str, items: Iterable[Waiting], sight: Sight | None = None
    ) -> list[Waiting]:
        """The items this person may answer (and so see): nobody sees another route's
        questions, their titles or prompts; with ``sight``, only those of workspaces their
        own Kandev account sees (in routes that use it)."""
        mine = self.answerers.answerable(items, user_id, _task_of)
        return sight.visible(mine) if sight is not None else mine

    def resolved_visible_to(
        self, user_id: str, items: Iterable[S], sight: Sight | None = None
    ) -> list[S]:
        """Resolved items whose route lets this person answer: who answered what stays
        within the route (and, with ``sight``, within the workspaces their account sees)."""
        mine = self.answerers.answerable(items, user_id, _task_of)
        return sight.visible(mine) if sight is not None else mine

    def posted_pending(self) -> list[Waiting]:
        """What the bot last knew was waiting (its pending, posted cards): for when Kandev
        cannot be reached."""
        return [
            Waiting(c.bundle, task=c.task, card=c)
            for c in self.cards.pending()
            if c.ts and spec_of(c).listed_as_question
        ]

    def approvals_for(
        self, user_id: str, sight: Sight | None = None
    ) -> list[tuple[Card, str | None]]:
        """The approvals waiting that this person may answer (posted cards, oldest first),
        each with its card's permalink (with ``sight``: see :meth:`visible_to`)."""
        cards = self.cards.pending_of_kind(APPROVAL_PREFIX)
        mine = self.answerers.answerable([c for c in cards if c.ts], user_id, _task_of)
        mine = sight.visible(mine) if sight is not None else mine
        return [(c, self.permalinks.of(c)) for c in mine]

    def shown(
        self, items: Iterable[Waiting], *, members: bool = True, strict: bool = False
    ) -> list[Waiting]:
        """The items a page shows, each with its card (when posted) and the card's permalink;
        a group row's other items too (``members``: else they are only counted, as a digest's
        row links its first card alone). ``strict``: a link Slack may give later (rate
        limited) raises instead of being left out (a message sent once waits for it)."""
        out = []
        for item in items:
            card = item.card or self.cards.get(item.pending_id)
            card = card if card is not None and card.state is CardState.PENDING else None
            link = self.permalinks.of(card, strict=strict) if card is not None else None
            others = tuple(self.shown(item.others, strict=strict)) if members else item.others
            out.append(Waiting(item.bundle, item.task, card, link, others=others))
        return out

    def places(self) -> dict[str, GroupPlace]:
        """Where each waiting card of a grouped item is (to show identical items as one row:
        kandev_slack.usecases.views.waiting.py)."""
        return self.cards.pending_places()

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

    def _join(self, bundle: ListedBundle, task: TaskInfo | None) -> Waiting | None:
        """The bundle with its task (its card's, when posted); None (left out) when its task,
        and so its route, cannot be determined."""
        if task is not None:
            return Waiting(bundle, task=task)
        try:
            return Waiting(bundle, task=self.tasks.info(bundle.task_id))
        except TaskUnknown as exc:
            log.warning("not listing bundle %s: %s", bundle.pending_id, exc.reason)
            return None


def _task_of(item: Seen) -> TaskInfo:
    return item.task


# ---- identical items as one row (issue 33) ---------------------------------------------------

# Identical items as one row (issue 33): the listing and the App Home show the items
# identical to each other that wait in one channel (kandev_slack/usecases/groups.py: one channel
# card, the others in its thread) as ONE row — the first card's headline, "3 agents", "Answer
# for all" and a link to each.
#
# Pure: the rows are built from the person's items (only those they may answer, so a row never
# counts or links an item of another route) and where each one's card is
# (:class:`~kandev_slack.core.groups.GroupPlace`). A row stands where its first card stands in
# the listing's order (the group's channel card; when that one is not among the items, the
# group's first item in that order); the others leave their places. A row counts as its items
# in every count ("N waiting", "showing 1–5", "N more").

_T = TypeVar("_T")

#: At most this many items make one row (the rest of a larger group are rows of their own:
#: the row's links and its Block Kit text stay bounded).
MAX_ROW = 20


def group_rows(items: Sequence[Waiting], places: Mapping[str, GroupPlace]) -> list[Waiting]:
    """``items`` (in the listing's order) with identical items in one channel made one row."""
    groups: dict[tuple[str, str], list[Waiting]] = {}
    for item in items:
        place = places.get(item.pending_id)
        if place is not None:
            groups.setdefault((place.channel, place.key), []).append(item)
    lead_of: dict[str, Waiting] = {}  # pending id of a lead → its row
    member: set[str] = set()  # pending ids folded into another's row
    for found in groups.values():
        for chunk in _chunks(found):
            if len(chunk) < 2:
                continue
            lead = next((m for m in chunk if places[m.pending_id].thread_of is None), chunk[0])
            others = tuple(m for m in chunk if m is not lead)
            lead_of[lead.pending_id] = replace(lead, others=others)
            member.update(m.pending_id for m in others)
    rows = []
    for item in items:
        if item.pending_id in member:
            continue
        rows.append(lead_of.get(item.pending_id, item))
    return rows


def _chunks(found: list[_T]) -> list[list[_T]]:
    return [found[i : i + MAX_ROW] for i in range(0, len(found), MAX_ROW)]


def items_in(rows: Sequence[Waiting]) -> int:
    """How many items ``rows`` stand for."""
    return sum(row.count for row in rows)


#: An approval waiting and its card's permalink, as the listing and Home show it.
ApprovalRow = tuple[Card, str | None]


def group_approvals(
    rows: Sequence[ApprovalRow],
) -> tuple[list[ApprovalRow], dict[str, tuple[ApprovalRow, ...]]]:
    """Identical approvals waiting in one channel as one row, as :func:`group_rows` does for
    questions: the rows left (each group's first card, where it stands) and, by a row's
    pending id, the others it stands for. ``rows`` are those the person may answer only."""
    groups: dict[tuple[str, str], list[ApprovalRow]] = {}
    for row in rows:
        key = group_key(row[0])
        if key is not None:
            groups.setdefault((row[0].channel, key), []).append(row)
    others: dict[str, tuple[ApprovalRow, ...]] = {}
    folded: set[str] = set()
    for found in groups.values():
        for chunk in _chunks(found):
            if len(chunk) < 2:
                continue
            lead = next((r for r in chunk if r[0].thread_of is None), chunk[0])
            rest = tuple(r for r in chunk if r is not lead)
            others[lead[0].pending_id] = rest
            folded.update(r[0].pending_id for r in rest)
    return [r for r in rows if r[0].pending_id not in folded], others
