"""Kandev -> Slack: new bundles, from the full reads of the active list and from push hints.

A full read (the coordinator's, kandev_slack/usecases/intake/sync.py) hands the bundles it decoded
to :meth:`Discovery.take_listed`. A push hint announcing a new bundle names its task and session:
the bundle is read from that session's newest conversation messages (which show every question
of it, its context, status and creation time), not from the active list, whose every read
costs Kandev in proportion to all that waits (with 1,000 waiting, a read of its newest part
alone took Kandev ~35 ms, against ~4 ms for a conversation): noticing one new bundle costs the
same whatever else waits. Its task is read at the same time, on a few threads of their own (a
read still waiting its turn when it is needed is made then instead); the task is then looked
up as always, so a lookup that failed still fails closed. A hinted bundle whose questions are
not all written yet is looked for again shortly.

A burst of hints handed over together (more than :data:`ONE_BY_ONE`), a hint that names no
task, or one whose conversation cannot be read, reads the newest part of the list instead
(the bundles created since shortly before the newest one already seen: one read for the
burst), with each hinted bundle's question total and task read ahead meanwhile. A hinted
bundle that part does not show yet is looked for again shortly, and the next full read finds
any bundle a hint missed; the store's claim keeps each bundle posted once whichever read sees
it first.

A bundle read from its conversation may, in the moment between the hint and the read, have
been superseded (a new turn started: its messages keep "pending"); its card is then ended by
the next full read, as any bundle that leaves the list (kandev_slack/usecases/intake/reconciler.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any, Protocol

from kandev_slack.config.routing import Routing
from kandev_slack.core.clarification import Bundle
from kandev_slack.core.domain import Card, NewCard, TaskInfo
from kandev_slack.kandev.hints import NewPending
from kandev_slack.kandev.models import ActiveList
from kandev_slack.ops.health import Health
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.intake.reconciler import SessionIndex
from kandev_slack.usecases.intake.unroutable import Unroutable, Unroutables
from kandev_slack.usecases.past_answers import PastAnswers, question_key
from kandev_slack.usecases.tasks import TaskDirectory, TaskUnknown

log = logging.getLogger(__name__)

#: Bundles younger than this are checked for completeness before they are posted.
YOUNG_BUNDLE_S = 30.0
#: How soon discovery looks again at a bundle whose questions are still being written.
INCOMPLETE_RETRY_S = 0.2
#: A hint's read of the newest bundles starts this long before the newest one seen so far
#: (Kandev's creation times have whole seconds, and two bundles created together may become
#: visible in either order).
NEWEST_MARGIN_S = 2.0
#: How often (and how far apart) a hinted bundle that the newest bundles do not show yet is
#: looked for again before the next full read is left to find it.
HINT_RETRIES = 10
HINT_RETRY_S = 0.2
#: Reads ahead for hinted bundles running at once (two a bundle: its conversation, or its
#: question total, and its task); a burst of hints queues the rest instead of starting a thread
#: for each.
READ_AHEAD_WORKERS = 4
#: Hints handed over together up to this many are read one by one (each its conversation);
#: more read the newest part of the list once.
ONE_BY_ONE = READ_AHEAD_WORKERS // 2
#: The /healthz component for listed bundles that cannot be routed yet.
UNROUTABLE = "unroutable"


class DiscoveryKandev(Protocol):
    """What discovery reads from Kandev (kandev_slack.kandev.client.KandevClient)."""

    def list_pending(
        self,
        workspace_id: str | None = None,
        created_since: datetime | None = None,
        page_size: int = ...,
    ) -> list[Bundle]: ...

    def question_total(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> int: ...

    def conversation_bundle(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> Bundle | None: ...


class DiscoveryCards(Protocol):
    """What discovery calls on the cards (kandev_slack.store.CardsRepository)."""

    def get(self, pending_id: str) -> Card | None: ...

    def record_card(self, new: NewCard) -> bool: ...

    def pending_sessions(self) -> dict[str, str | None]: ...


class Posts(Protocol):
    """Where a recorded card's post is queued (kandev_slack.usecases.outbox.publisher.Publisher)."""

    def enqueue_post(self, card: Card) -> None: ...


class Discovery:
    """Claims and queues the post of every listed bundle that has no card yet."""

    def __init__(
        self,
        kandev: DiscoveryKandev,
        cards: DiscoveryCards,
        audit_log: Audit,
        routing: Routing,
        tasks: TaskDirectory,
        posts: Posts,
        health: Health,
        *,
        past: PastAnswers,
        clock: Callable[[], datetime],
        look_again: Callable[[NewPending, float], None],
        sessions: SessionIndex,
        unroutables: Unroutables,
    ) -> None:
        self.kandev, self.cards, self.audit_log = kandev, cards, audit_log
        self.routing, self.tasks = routing, tasks
        self.posts, self.health, self.past, self.clock = posts, health, past, clock
        #: Read the newest bundles again for a hint after so many seconds (the coordinator's).
        self.look_again = look_again
        #: The sessions of the listed bundles (shared with the reconciler).
        self.sessions = sessions
        #: Listed bundles whose route cannot be determined yet (their /healthz entry:
        #: :data:`UNROUTABLE`), by pending id.
        self.unroutables = unroutables
        self.unroutable: dict[str, Unroutable] = self.unroutables.items
        #: Listed bundles whose card is in the store (at first, every waiting card's: see
        #: :meth:`known`).
        self._known: set[str] = set()
        self._recalled = False
        #: Kandev's creation time of the newest bundle any read showed (Kandev's clock).
        self._newest: datetime | None = None
        #: Hinted bundles not shown yet by a read of the newest ones: looks left, by pending id.
        self._hint_retries: dict[str, int] = {}
        #: Reads started for hinted bundles, by pending id: the bundle (from its conversation)
        #: or, for one looked for in the list, its question total; and the task lookup (which
        #: warms the Kandev client's cache).
        self._reads: dict[str, Future[Bundle | None]] = {}
        self._totals: dict[str, Future[int]] = {}
        self._lookups: dict[str, Future[TaskInfo]] = {}
        self._read_ahead_pool = ThreadPoolExecutor(
            max_workers=READ_AHEAD_WORKERS, thread_name_prefix="sync-read-ahead"
        )
        #: Held while the bundles of a read are posted: the full read and the hinted one run
        #: on two threads and share what is known about each bundle.
        self._posting = threading.Lock()

    def close(self) -> None:
        """Stop reading ahead: reads not started are cancelled, those running end on their
        own; a read ahead asked for later is not made. Idempotent."""
        self._read_ahead_pool.shutdown(wait=False, cancel_futures=True)

    def known(self) -> frozenset[str]:
        """The listed bundles known to have a card (a full read need not decode them). The
        first time, every waiting card's bundle, with its session, from the store: a process
        that starts with 1,000 waiting would otherwise decode them all at once in its first
        read (megabytes it keeps as long as it lives) only to find each has a card; a bundle
        the read does not list is forgotten by it (:meth:`take_listed`)."""
        with self._posting:
            if not self._recalled:
                for pending_id, session_id in self.cards.pending_sessions().items():
                    self._known.add(pending_id)
                    if session_id:
                        self.sessions.note(session_id, pending_id)
                self._recalled = True
            return frozenset(self._known)

    def take_page(self, bundles: list[Bundle]) -> list[str]:
        """The new bundles of one page of a full read, posted as soon as their page is read
        (what left the list is known only once the whole list is, :meth:`take_listed`); the
        posted pending ids."""
        with self._posting:
            return self._post_unknown(bundles)

    def take_listed(self, listed: ActiveList) -> None:
        """A whole full read of the active list (its new bundles went to :meth:`take_page`
        page by page): forget what left it."""
        self._saw_newest(listed.newest)
        active = set(listed.ids)
        self.sessions.keep(active)
        with self._posting:
            self._known &= active
            self.unroutables.report(active)

    def discover_new(self, hinted: Collection[NewPending] = ()) -> tuple[int, set[str], list[str]]:
        """Post the new bundles push hints announced (``hinted``): a few, each read from its
        own session's conversation; a burst, those a hint names no task of, or whose
        conversation could not be read, from the part of the list created since shortly before
        the newest bundle seen so far: (how many were read, their pending ids, those posted)."""
        hints = [h for h in dict.fromkeys(hinted) if h.pending_id not in self._known]
        alone = [h for h in hints if h.task_id] if len(hints) <= ONE_BY_ONE else []
        try:
            for hint in hints:
                self.read_ahead(hint, whole=hint in alone)
            read: list[Bundle] = []
            unread = len(alone) < len(hints)
            for hint in alone:
                readable, bundle = self._read_hinted(hint)
                if bundle is not None:
                    read.append(bundle)
                unread = unread or not readable
            listed = self._read_newest() if unread else []
            shown = {b.pending_id for b in read} | {b.pending_id for b in listed}
            with self._posting:
                waiting = [b for b in read if any(q.status == "pending" for q in b.questions)]
                posted = self._post_unknown(waiting, whole=True) + self._post_unknown(listed)
                self._retry_hinted(hinted, shown)
            return len(read) + len(listed), shown, posted
        finally:
            # reads ahead not used by now are made again when needed
            self._reads.clear()
            self._totals.clear()
            self._lookups.clear()

    def _read_newest(self) -> list[Bundle]:
        """The part of the list created since shortly before the newest bundle seen so far."""
        newest = self._newest
        since = newest - timedelta(seconds=NEWEST_MARGIN_S) if newest else None
        bundles = self.kandev.list_pending(created_since=since)
        self._saw_newest(max((b.created_at for b in bundles), default=None))
        return bundles

    def _read_hinted(self, hint: NewPending) -> tuple[bool, Bundle | None]:
        """Whether the hinted bundle's conversation could be read (else the list is read
        instead), and the bundle as it shows it (None: not all written yet). A read ahead
        still waiting its turn is made here instead; one running is waited for."""
        ahead = self._reads.pop(hint.pending_id, None)
        try:
            if ahead is not None and not ahead.cancel():
                return True, ahead.result()
            return True, self._conversation_bundle(hint)
        except Exception as exc:  # whatever it was, the list says what is waiting
            log.warning("hinted bundle %s not read (%s): reading the list", hint.pending_id, exc)
            return False, None

    def _conversation_bundle(self, hint: NewPending) -> Bundle | None:
        return self.kandev.conversation_bundle(
            hint.task_id, hint.pending_id, session_id=hint.session_id or None
        )

    def _post_unknown(self, bundles: list[Bundle], *, whole: bool = False) -> list[str]:
        """Post the bundles not known to have a card yet (with ``_posting`` held); ``whole``:
        each is known to show every question of it (read from its conversation)."""
        posted = []
        for bundle in bundles:
            if bundle.session_id:
                self.sessions.note(bundle.session_id, bundle.pending_id)
            if bundle.pending_id in self._known or not self.unroutables.due(bundle.pending_id):
                continue
            if self.cards.get(bundle.pending_id) is not None:
                self._known.add(bundle.pending_id)
            elif self._post_new(bundle, whole=whole):
                self._known.add(bundle.pending_id)
                posted.append(bundle.pending_id)
        return posted

    def read_ahead(self, hint: NewPending, *, whole: bool = False) -> None:
        """Start reading the hinted bundle's task in the background, and with it the bundle
        itself (``whole``: from its conversation) or its question total (it is looked for in
        the list)."""
        pending_id, task_id = hint.pending_id, hint.task_id
        reads: dict[str, Any] = self._reads if whole else self._totals
        if not task_id or pending_id in self._known or pending_id in reads:
            return
        session_id = hint.session_id or None
        try:
            if whole:
                read: Future[Any] = self._read_ahead_pool.submit(self._conversation_bundle, hint)
            else:
                read = self._read_ahead_pool.submit(
                    self.kandev.question_total, task_id, pending_id, session_id=session_id
                )
            lookup = self._read_ahead_pool.submit(self.tasks.info, task_id)
        except RuntimeError:  # closed: shutting down
            return
        reads[pending_id], self._lookups[pending_id] = read, lookup

    def _retry_hinted(self, hinted: Collection[NewPending], shown: Collection[str]) -> None:
        """Hinted bundles a read did not show are looked for again a few times (a bundle
        shown but not posted yet has its own retry: incomplete, unroutable)."""
        for hint in hinted:
            pending_id = hint.pending_id
            if pending_id in shown or pending_id in self._known:
                self._hint_retries.pop(pending_id, None)
                continue
            left = self._hint_retries.get(pending_id, HINT_RETRIES)
            if left > 0:
                self._hint_retries[pending_id] = left - 1
                self.look_again(hint, HINT_RETRY_S)
            else:  # the next full read finds it
                self._hint_retries.pop(pending_id, None)

    def _saw_newest(self, newest: datetime | None) -> None:
        with self._posting:
            if newest is not None and (self._newest is None or newest > self._newest):
                self._newest = newest

    # ---- one new bundle ----------------------------------------------------------------

    def _post_new(self, bundle: Bundle, *, whole: bool = False) -> bool:
        if not whole and not self._complete(bundle):
            hint = NewPending(bundle.pending_id, bundle.task_id, bundle.session_id)
            self.look_again(hint, INCOMPLETE_RETRY_S)
            return False
        lookup = self._lookups.pop(bundle.pending_id, None)
        # A lookup still waiting its turn is dropped; one started is waited for (the lookup
        # below then reads its result from the cache).
        if lookup is not None and not lookup.cancel():
            lookup.exception()
        try:
            task = self.tasks.info(bundle.task_id)
        except TaskUnknown as exc:
            return self.unroutables.failed(bundle.pending_id, exc.reason)
        route = self.routing.route_for(task)
        if route is None:
            name = task.workspace_name or task.workspace_id
            reason = f"no channel for workspace {name!r}: add a [[route]] or a default channel"
            return self.unroutables.failed(bundle.pending_id, reason)
        self.unroutables.routed(bundle.pending_id)
        recorded = self.cards.record_card(
            NewCard(
                bundle,
                task,
                route.channel,
                question_key=question_key(task.workspace_id, bundle),
                past=self.past.last(bundle, task, route),
            )
        )
        if not recorded:
            return False  # another replica (or an earlier cycle) has it
        card = self.cards.get(bundle.pending_id)
        if card is not None:
            self.posts.enqueue_post(card)
            self.audit_log.audit(bundle.pending_id, None, "post", "kandev", "queued", route.channel)
        return True

    def _complete(self, bundle: Bundle) -> bool:
        """False while Kandev is still writing the bundle's questions (a young bundle can be
        listed with only some of them; a card must never show a partial bundle)."""
        ahead = self._totals.pop(bundle.pending_id, None)
        if ahead is not None:
            ahead.cancel()  # still waiting its turn (a burst of hints): read below instead
        if (self.clock() - bundle.created_at).total_seconds() > YOUNG_BUNDLE_S:
            return True
        # Read ahead (maybe before the list was): a total of 0 means no question was written
        # yet when it was read, so it is read again.
        total = 0 if ahead is None or _failed(ahead) else ahead.result()
        if total == 0:
            total = self.kandev.question_total(
                bundle.task_id, bundle.pending_id, session_id=bundle.session_id or None
            )
        return total <= len(bundle.questions)


def _failed(future: Future[Any]) -> bool:
    """Wait for a read ahead: True if it raised or was cancelled (never started: shut down, or
    still waiting its turn when needed); the caller then reads itself."""
    try:
        return future.exception() is not None
    except CancelledError:
        return True
