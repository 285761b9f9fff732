"""What is waiting for an answer: Kandev's active list (the truth) joined with the bot's cards.

Used by ``/kandev-questions`` (filtered, paged) and the App Home tab. The filter is a Kandev
workspace name (or id), else words that must all occur in the task title or the questions.
Paging continues *after* the last bundle shown (by ``created_at``, ``pending_id``), so a bundle
answered meanwhile never makes the next page skip another one.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.cards import listing as render
from bot.cards.text import one_line
from bot.domain import Card, CardState, TaskInfo
from bot.kandev.client import KandevClient
from bot.kandev.errors import KandevAuthError, KandevError, KandevUnavailable
from bot.kandev.models import Bundle, Workspace
from bot.redaction import without_userinfo
from bot.routing import Routing
from bot.store import Store

log = logging.getLogger(__name__)

#: The longest filter accepted (code points): a workspace name or a few words.
MAX_FILTER = 200
HELP_WORDS = frozenset({"help", "-h", "--help", "?"})

PageKey = tuple[datetime, str]


# ---- the filter --------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A parsed filter: ``text`` as typed (one line), ``words`` casefolded ("" / () = all)."""

    text: str = ""
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class HelpRequest:
    """``/kandev-questions help``."""


@dataclass(frozen=True)
class BadFilter:
    """A filter that cannot be used; ``message`` says why and what to type instead."""

    message: str


def parse_query(raw: str) -> Query | HelpRequest | BadFilter:
    """What the person typed after the command."""
    text = one_line(raw or "")
    if text.casefold() in HELP_WORDS:
        return HelpRequest()
    if len(text) > MAX_FILTER:
        return BadFilter(render.filter_too_long_message(len(text), MAX_FILTER))
    return Query(text=text, words=tuple(w.casefold() for w in text.split()))


def matching_workspace(query: Query, workspaces: Iterable[Workspace]) -> Workspace | None:
    """The workspace the whole filter names (its name ignoring case, or its id), if any."""
    if not query.text:
        return None
    wanted = query.text.casefold()
    for workspace in workspaces:
        if workspace.id == query.text or (workspace.name and workspace.name.casefold() == wanted):
            return workspace
    return None


def _haystack(item: Waiting) -> str:
    parts = [item.task.title]
    for question in item.bundle.questions:
        parts += [question.title, question.prompt]
    return one_line(" ".join(parts)).casefold()


def matches(item: Waiting, query: Query) -> bool:
    """Every word of the filter occurs in the task title, a question title or a prompt."""
    if not query.words:
        return True
    haystack = _haystack(item)
    return all(word in haystack for word in query.words)


def paginate(
    items: Sequence[Waiting], after: PageKey | None, size: int
) -> tuple[list[Waiting], int, bool]:
    """The page that follows ``after`` in ``items`` (Kandev's order, oldest first): its items,
    how many items come before it, and whether more follow.

    The page starts right after the bundle ``after`` names; if that one is gone meanwhile, after
    the last bundle not newer than it (Kandev reports ``created_at`` in whole seconds and orders
    by more than that, so its order is kept rather than re-sorted)."""
    start = 0
    if after is not None:
        ids = [it.bundle.pending_id for it in items]
        if after[1] in ids:
            start = ids.index(after[1]) + 1
        else:
            start = next((i for i, it in enumerate(items) if it.key > after), len(items))
    rest = list(items[start:])
    return rest[:size], start, len(rest) > size


# ---- what is waiting -----------------------------------------------------------------------


@dataclass(frozen=True)
class Waiting:
    """One bundle waiting for an answer, with its task and (when posted) its card."""

    bundle: Bundle
    task: TaskInfo
    card: Card | None = None
    permalink: str | None = None

    @property
    def key(self) -> PageKey:
        created = self.bundle.created_at
        created = created.replace(tzinfo=UTC) if created.tzinfo is None else created
        return (created.astimezone(UTC), self.bundle.pending_id)


@dataclass(frozen=True)
class ListingPage:
    query: Query
    workspace: Workspace | None  # the workspace the filter named, if it named one
    items: list[Waiting]  # this page, oldest first
    total: int  # everything that matches, on every page
    first: int  # 1-based position of the page's first item among ``total``
    number: int  # 1-based page number
    next_after: PageKey | None  # where the next page starts, when there is one
    workspace_names: tuple[str, ...] = ()  # for the empty state's hint


@dataclass(frozen=True)
class Reply:
    """An ephemeral message: fallback text and blocks."""

    text: str
    blocks: list[dict]


class Permalinks:
    """``chat.getPermalink`` results, remembered (a message's permalink never changes)."""

    def __init__(self, fetch: Callable[[str, str], str | None], max_entries: int = 4096):
        self._fetch = fetch
        self._max = max_entries
        self._lock = threading.Lock()
        self._known: OrderedDict[tuple[str, str], str] = OrderedDict()

    def get(self, channel: str, ts: str) -> str | None:
        key = (channel, ts)
        with self._lock:
            if key in self._known:
                self._known.move_to_end(key)
                return self._known[key]
        link = self._fetch(channel, ts)
        if link:
            with self._lock:
                self._known[key] = link
                while len(self._known) > self._max:
                    self._known.popitem(last=False)
        return link


class ListingService:
    def __init__(
        self,
        kandev: KandevClient,
        store: Store,
        routing: Routing,
        task_info: Callable[[str], TaskInfo],
        permalinks: Permalinks,
        *,
        kandev_url: str,
        page_size: int = render.DEFAULT_PAGE_SIZE,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ):
        self.kandev = kandev
        self.store = store
        self.routing = routing
        self.task_info = task_info
        self.permalinks = permalinks
        self.kandev_url = kandev_url
        self.page_size = max(1, min(page_size, render.MAX_PAGE_SIZE))
        self.clock = clock

    # ---- reading -------------------------------------------------------------------------

    def waiting(self, workspace_id: str | None = None) -> list[Waiting]:
        """Every bundle Kandev lists as active, in Kandev's order (oldest first), with its task
        and card. Raises KandevUnavailable / KandevAuthError / KandevError when Kandev cannot
        say."""
        bundles = self.kandev.list_pending(workspace_id=workspace_id)
        # One read of the pending cards instead of one per bundle (the command acks with this).
        cards = {c.pending_id: c for c in self.store.pending()}
        return [self._join(b, cards.get(b.pending_id)) for b in bundles]

    def posted_pending(self) -> list[Waiting]:
        """What the bot last knew was waiting (its pending, posted cards): for when Kandev
        cannot be reached."""
        return [Waiting(bundle=c.bundle, task=c.task, card=c) for c in self.store.pending() if c.ts]

    def with_permalinks(self, items: Iterable[Waiting]) -> list[Waiting]:
        out = []
        for item in items:
            card = item.card
            link = self.permalinks.get(card.channel, card.ts) if card and card.ts else None
            out.append(Waiting(item.bundle, item.task, item.card, link))
        return out

    def page(self, query: Query, *, after: PageKey | None = None, number: int = 1) -> ListingPage:
        workspaces = self.kandev.workspaces()
        workspace = matching_workspace(query, workspaces)
        if workspace is not None:
            found = self.waiting(workspace_id=workspace.id)
        else:
            found = [it for it in self.waiting() if matches(it, query)]
        items, before, more = paginate(found, after, self.page_size)
        return ListingPage(
            query=query,
            workspace=workspace,
            items=self.with_permalinks(items),
            total=len(found),
            first=before + 1,
            number=max(1, number),
            next_after=items[-1].key if more and items else None,
            workspace_names=tuple(w.name for w in workspaces if w.name),
        )

    def find_card(self, pending_id: str) -> Card | None:
        """A card for a bundle Kandev lists but the bot has not posted (yet): lets "Answer…"
        in the list work for it. None when Kandev does not list it (or cannot be asked)."""
        try:
            bundle = next(
                (b for b in self.kandev.list_pending() if b.pending_id == pending_id), None
            )
            if bundle is None:
                return None
            task = self.task_info(bundle.task_id)
        except KandevError as exc:
            log.warning("cannot look up bundle %s in Kandev: %s", pending_id, exc)
            return None
        route = self.routing.route_for(task.workspace_id, task.workspace_name)
        now = self.clock()
        return Card(
            pending_id=bundle.pending_id,
            task_id=bundle.task_id,
            session_id=bundle.session_id,
            workspace_id=task.workspace_id,
            channel=route.channel if route else "",
            state=CardState.PENDING,
            bundle=bundle,
            task=task,
            created_at=bundle.created_at,
            updated_at=now,
        )

    # ---- the command's answer ------------------------------------------------------------

    def reply(self, text: str, *, after: PageKey | None = None, number: int = 1) -> Reply:
        """The ephemeral answer to ``/kandev-questions <text>`` (or its "Next" button)."""
        parsed = parse_query(text)
        if isinstance(parsed, HelpRequest):
            return Reply(**render.render_help())
        if isinstance(parsed, BadFilter):
            return Reply(**render.render_problem(parsed.message))
        try:
            page = self.page(parsed, after=after, number=number)
        except KandevUnavailable as exc:
            log.warning("listing: Kandev unreachable: %s", exc)
            message = render.kandev_unreachable_message(without_userinfo(self.kandev.base_url))
            return Reply(**render.render_problem(message))
        except KandevAuthError as exc:
            log.error("listing: %s", exc)
            return Reply(**render.render_problem(render.kandev_auth_message()))
        except KandevError as exc:
            log.exception("listing failed")
            return Reply(**render.render_problem(render.kandev_failed_message(str(exc))))
        return Reply(**render.render_listing(page, kandev_url=self.kandev_url, now=self.clock()))

    # ---- internals -----------------------------------------------------------------------

    def _join(self, bundle: Bundle, card: Card | None) -> Waiting:
        task = card.task if card is not None else self.task_info(bundle.task_id)
        return Waiting(bundle=bundle, task=task, card=card)
