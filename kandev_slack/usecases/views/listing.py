"""``/kandev-questions``: filter, page and render what is waiting
(kandev_slack/usecases/views/waiting.py).

The filter is a Kandev workspace name (or id), else words that must all occur as whole words
("hi" never matches "which") in the task title, the questions or the agent's name;
``label:database`` terms (every one present) and ``priority:critical`` terms (any of them)
narrow either down.
The list puts critical questions first, then high ones, then the rest, each oldest first.
Paging continues *after* the last bundle shown (by urgency, ``created_at``, ``pending_id``), so
a bundle answered meanwhile never makes the next page skip another one; "Previous page" ends
right before the first bundle shown.
Identical items waiting in one channel are one row (kandev_slack.usecases.views.waiting.py): a
page holds at most ``page_size`` rows, and every count ("N waiting", "showing 1–5", "N more")
counts a row as its items.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kandev_slack.cards.text import one_line
from kandev_slack.core.clarification import ListedBundle
from kandev_slack.core.domain import Card, TaskInfo
from kandev_slack.core.limits import DEFAULT_PAGE_SIZE
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevAuthError, KandevError, KandevUnavailable
from kandev_slack.kandev.models import DEFAULT_PRIORITY, PRIORITIES, Workspace
from kandev_slack.ops.redaction import without_userinfo
from kandev_slack.surfaces import listing as render
from kandev_slack.surfaces.listing import NextPage
from kandev_slack.surfaces.waiting import (
    BadFilter,
    ListingFailure,
    ListingPage,
    PageKey,
    Query,
    Waiting,
)
from kandev_slack.usecases.views.seeing import Sight
from kandev_slack.usecases.views.waiting import (
    WaitingQueue,
    group_approvals,
    group_rows,
    items_in,
)

log = logging.getLogger(__name__)

#: The longest a listing waits for its turn to be computed (one at a time: see
#: ListingService.computing): longer than computing one of 1,000 waiting takes (~40 ms), short
#: enough that one held up by a slow look-up (a permalink, a person's Kandev inbox) holds the
#: others up for little.
LISTING_TURN_WAIT_S = 0.2

#: The longest filter accepted (code points): a workspace name or a few words.
MAX_FILTER = 200
HELP_WORDS = frozenset({"help", "-h", "--help", "?"})
#: Filter terms that name a task property: ``label:database``, ``priority:critical``.
TERMS = ("label", "priority")
#: Punctuation typed around a filter word ("database?"), not part of it.
_EDGE_PUNCTUATION = "\"'“”‘’.,;:!?()[]{}<>«»"

# ---- the filter --------------------------------------------------------------------------


@dataclass(frozen=True)
class HelpRequest:
    """``/kandev-questions help``."""


def parse_query(raw: str) -> Query | HelpRequest | BadFilter:
    """What the person typed after the command."""
    text = one_line(raw or "")
    if text.casefold() in HELP_WORDS:
        return HelpRequest()
    if len(text) > MAX_FILTER:
        return BadFilter("too_long", length=len(text), limit=MAX_FILTER)
    words: list[str] = []
    labels: list[str] = []
    priorities: list[str] = []
    for term in text.split():
        kind, value = _term(term)
        if kind is None:
            words.append(term.casefold())
        elif not value:
            return BadFilter("empty_term", term=kind)
        elif kind == "label":
            labels.append(value)
        elif value not in PRIORITIES:
            return BadFilter("unknown_priority", term=kind, value=value, known=PRIORITIES)
        else:
            priorities.append(value)
    return Query(text=text, words=tuple(words), labels=tuple(labels), priorities=tuple(priorities))


def _term(term: str) -> tuple[str | None, str]:
    """``label:x`` → ("label", "x"), ``priority:x`` → ("priority", "x"); else (None, "")."""
    head, sep, value = term.partition(":")
    kind = head.casefold()
    if sep and kind in TERMS:
        return kind, value.casefold()
    return None, ""


def _free_text(text: str) -> str:
    """The filter without its ``label:`` / ``priority:`` terms."""
    return " ".join(t for t in text.split() if _term(t)[0] is None)


def matching_workspace(query: Query, workspaces: Iterable[Workspace]) -> Workspace | None:
    """The workspace the filter's words name together (its name ignoring case, or its id)."""
    text = _free_text(query.text)
    if not text:
        return None
    wanted = text.casefold()
    for workspace in workspaces:
        if workspace.id == text or (workspace.name and workspace.name.casefold() == wanted):
            return workspace
    return None


def _haystack(item: Waiting) -> str:
    parts = [item.task.title, item.task.agent_name]
    for question in item.bundle.questions:
        parts += [question.title, question.prompt]
    return one_line(" ".join(parts)).casefold()


def _whole_word(word: str) -> re.Pattern[str]:
    """``word`` as a whole word: not inside another ("hi" never matches "which"); the
    punctuation typed around it ("database?") is not part of it."""
    core = word.strip(_EDGE_PUNCTUATION) or word
    return re.compile(rf"(?<!\w){re.escape(core)}(?!\w)")


def matches_terms(item: Waiting, query: Query) -> bool:
    """Every ``label:`` of the filter is on the task, and its priority is one of the
    ``priority:`` terms (a task without one counts as medium)."""
    return _terms_match(item.task, query)


def _terms_match(task: TaskInfo, query: Query) -> bool:
    labels = {label.casefold() for label in task.labels}
    if not set(query.labels) <= labels:
        return False
    priority = (task.priority or DEFAULT_PRIORITY).casefold()
    return not query.priorities or priority in query.priorities


def _words_in(words: Sequence[str], haystack: str) -> bool:
    return all(_whole_word(word).search(haystack) for word in words)


def _approval_haystack(card: Card) -> str:
    """An approval's searchable text: the task title, the agent, what it wants to do."""
    action = card.approval.action
    parts = [card.task.title, card.task.agent_name, action.description, action.command]
    parts += [action.path, action.destination]
    return one_line(" ".join(parts)).casefold()


def matches(item: Waiting, query: Query) -> bool:
    """Every word of the filter occurs, as a whole word, in the task title, a question title or
    prompt or the agent's name; and the labels and priority terms match."""
    if not matches_terms(item, query):
        return False
    if not query.words:
        return True
    return _words_in(query.words, _haystack(item))


#: The listing's order: critical questions first, then high, then the rest (each in Kandev's
#: order, oldest first).
URGENCY = {"critical": 0, "high": 1}
OTHER_RANK = 2


def urgency_rank(task: TaskInfo) -> int:
    """0 for a critical task, 1 for a high one, 2 for any other."""
    return URGENCY.get((task.priority or "").casefold(), OTHER_RANK)


def most_urgent_first(items: Sequence[Waiting]) -> list[Waiting]:
    """Critical first, then high, then the rest; Kandev's order (oldest first) within each."""
    return sorted(items, key=lambda it: urgency_rank(it.task))


def _count(items: Sequence[Waiting], rank: int) -> int:
    return sum(1 for it in items if urgency_rank(it.task) == rank)


def _position(items: Sequence[Waiting], key: PageKey, rank: int) -> tuple[int, bool]:
    """Where the bundle ``key`` names is in ``items`` (True), or where it would be: the first
    bundle after it in the listing's order (False)."""
    ids = [it.pending_id for it in items]
    if key[1] in ids:
        return ids.index(key[1]), True
    later = (i for i, it in enumerate(items) if (urgency_rank(it.task), it.key) > (rank, key))
    return next(later, len(items)), False


def paginate(
    items: Sequence[Waiting],
    after: PageKey | None,
    size: int,
    *,
    rank: int = OTHER_RANK,
    backwards: bool = False,
) -> tuple[list[Waiting], int, bool]:
    """The page that follows ``after`` in ``items`` (the listing's order: see
    :func:`most_urgent_first`), or with ``backwards`` the page that ends right before it: its
    items, how many items come before it, and whether more follow.

    The page starts right after the bundle ``after`` names (``rank``: its urgency); if that one
    is gone meanwhile, after the last bundle not later than it (Kandev reports ``created_at``
    in whole seconds and orders by more than that, so its order is kept rather than
    re-sorted)."""
    start = 0
    if after is not None:
        position, found = _position(items, after, rank)
        if backwards:
            begin = max(0, position - size)
            return list(items[begin:position]), begin, True
        start = position + 1 if found else position
    rest = list(items[start:])
    return rest[:size], start, len(rest) > size


# ---- the command's answer ------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """An ephemeral message: fallback text and blocks."""

    text: str
    blocks: list[dict[str, Any]]


class ListingService:
    def __init__(
        self,
        queue: WaitingQueue,
        kandev: KandevClient,
        *,
        kandev_url: str,
        page_size: int = DEFAULT_PAGE_SIZE,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        snoozed: Callable[[str], set[str]] | None = None,
        accounts: bool = False,
        computing: Callable[[], AbstractContextManager[object]] = nullcontext,
    ):
        self.queue = queue
        #: Entered while a page is computed from Kandev's list (not while the list is read):
        #: kandev_slack.ops.urgency.Turns, one listing at a time. Listings computed side by
        #: side take no less time in all (Python runs one thread at a time), and every ack
        #: waiting for the interpreter meanwhile has more threads to wait behind: 20 commands
        #: among 1,000 waiting shared one read of Kandev's list, then all computed at once.
        self.computing = computing
        #: Whether people connect their own Kandev accounts here (the help names the commands).
        self.accounts = accounts
        #: The ids a person snoozed (kandev_slack/usecases/answering/snooze.py): not listed, only
        #: counted.
        self.snoozed = snoozed
        self.kandev = kandev
        self.kandev_url = kandev_url
        self.page_size = page_size  # KANDEV_LIST_PAGE_SIZE, validated by the settings
        self.clock = clock

    def page(self, query: Query, user_id: str, *, wanted: NextPage | None = None) -> ListingPage:
        """One page of what ``user_id`` may answer that matches ``query``: the first, or the
        one a "Next page" / "Previous page" button asks for (``wanted``)."""
        # What their own Kandev account sees, in routes that use it (issue 32): a workspace
        # it cannot see is neither listed nor named.
        sight = self.queue.sight_of(user_id)
        workspaces = [w for w in self.kandev.workspaces() if sight.sees_workspace(w.id)]
        workspace = matching_workspace(query, workspaces)
        listed = self.queue.listed(workspace.id if workspace is not None else None)
        with self.computing():
            return self._page(query, user_id, wanted, sight, workspaces, workspace, listed)

    def _page(
        self,
        query: Query,
        user_id: str,
        wanted: NextPage | None,
        sight: Sight,
        workspaces: Sequence[Workspace],
        workspace: Workspace | None,
        listed: Sequence[ListedBundle],
    ) -> ListingPage:
        after = wanted.after if wanted is not None else None
        rank = wanted.rank if wanted is not None else OTHER_RANK
        backwards = wanted is not None and wanted.backwards
        if workspace is not None:
            found = [it for it in self.queue.joined(listed) if matches_terms(it, query)]
        else:
            found = [it for it in self.queue.joined(listed) if matches(it, query)]
        found = [] if query.approvals_only else self.queue.visible_to(user_id, found, sight)
        hidden = self.snoozed(user_id) if self.snoozed is not None and found else set()
        snoozed = sum(1 for it in found if it.pending_id in hidden)
        found = most_urgent_first([it for it in found if it.pending_id not in hidden])
        found = sight.unhidden(found)  # snoozed or dismissed in their Kandev inbox
        # Identical items in one channel are one row; a page holds rows, every count items.
        rows = group_rows(found, self.queue.places()) if found else []
        items, before, more = paginate(rows, after, self.page_size, rank=rank, backwards=backwards)
        approvals = () if before > 0 else self._approvals(query, user_id, workspace, sight)
        approval_rows, approval_others = group_approvals(approvals)
        return ListingPage(
            query=query,
            workspace=workspace,
            items=self.queue.shown(items),
            total=len(found),
            first=items_in(rows[:before]) + 1,
            number=wanted.number if wanted is not None else 1,
            next_after=items[-1].key if more and items else None,
            next_rank=urgency_rank(items[-1].task) if items else OTHER_RANK,
            previous_before=items[0].key if before > 0 and items else None,
            previous_rank=urgency_rank(items[0].task) if items else OTHER_RANK,
            urgent=(_count(found, 0), _count(found, 1)),
            workspace_names=tuple(w.name for w in workspaces if w.name),
            approvals=tuple(approval_rows),
            approval_others=approval_others,
            snoozed=snoozed,
        )

    def _approvals(
        self, query: Query, user_id: str, workspace: Workspace | None, sight: Sight | None = None
    ) -> tuple[tuple[Card, str | None], ...]:
        """The waiting approvals this person may answer that match ``query`` (its words in
        the task title or what the agent wants to do; ``approvals`` alone: all of them)."""
        rows = self.queue.approvals_for(user_id, sight)
        if workspace is not None:
            rows = [r for r in rows if r[0].task.workspace_id == workspace.id]
        elif query.words and not query.approvals_only:
            rows = [r for r in rows if _words_in(query.words, _approval_haystack(r[0]))]
        if query.labels or query.priorities:
            rows = [r for r in rows if _terms_match(r[0].task, query)]
        return tuple(rows)

    # ---- the command's answer ------------------------------------------------------------

    def reply(self, text: str, user_id: str, *, wanted: NextPage | None = None) -> Reply:
        """The ephemeral answer to ``/kandev-questions <text>`` (or its "Next" button) for
        ``user_id``: only what they may answer."""
        parsed = parse_query(text)
        if isinstance(parsed, HelpRequest):
            return Reply(**render.render_help(accounts=self.accounts))
        if isinstance(parsed, BadFilter):
            return Reply(**render.render_listing_problem(parsed))
        try:
            page = self.page(parsed, user_id, wanted=wanted)
        except KandevUnavailable as exc:
            log.warning("listing: Kandev unreachable: %s", exc)
            url = without_userinfo(self.kandev.base_url)
            return Reply(**render.render_listing_problem(ListingFailure("unreachable", url)))
        except KandevAuthError as exc:
            log.error("listing: %s", exc)
            return Reply(**render.render_listing_problem(ListingFailure("auth")))
        except KandevError as exc:
            log.exception("listing failed")
            failure = ListingFailure("failed", detail=str(exc))
            return Reply(**render.render_listing_problem(failure))
        return Reply(**render.render_listing(page, kandev_url=self.kandev_url, now=self.clock()))
