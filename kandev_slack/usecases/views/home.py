"""The App Home tab: build and publish it for one person, and keep it fresh for recent viewers.

Published when a person opens the tab (``app_home_opened``), and again for everyone who opened it
within ``recent_s`` whenever a card is posted or edited (the publisher raises ``changes``).
Refreshes run on their own worker thread: changes arriving together are coalesced into one
round, and rounds are spaced so that ``views.publish`` stays within Slack's rate limit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from kandev_slack.core.domain import ResolvedTask, TaskInfo
from kandev_slack.core.signals import Signal
from kandev_slack.core.snooze import Snooze
from kandev_slack.kandev.errors import KandevError
from kandev_slack.slack_api.gateway import SlackError, SlackGateway
from kandev_slack.store import CardsRepository, FollowupsRepository, HomeViewersRepository
from kandev_slack.surfaces.home import MAX_RESOLVED, MAX_WAITING, render_home
from kandev_slack.surfaces.subscriptions import with_home_blocks
from kandev_slack.surfaces.waiting import Waiting
from kandev_slack.usecases.views.listing import most_urgent_first
from kandev_slack.usecases.views.waiting import WaitingQueue, group_approvals, group_rows

log = logging.getLogger(__name__)

#: Whose Home is refreshed on a change: people who opened it within this many seconds.
RECENT_VIEWERS_S = 24 * 3600.0
MAX_VIEWERS = 100
#: Changes within this window are refreshed together.
DEBOUNCE_S = 0.3
#: Spacing per published view between rounds (views.publish allows ~100 per minute).
SPACING_PER_VIEW_S = 0.6
MAX_SPACING_S = 60.0
#: How long a notice stays at the top of a person's Home.
NOTICE_S = 120.0
#: Resolved cards read for "Recently resolved" (each person sees those of their routes).
RESOLVED_READ = 200


@dataclass(frozen=True)
class Snapshot:
    waiting: list[Waiting]
    resolved: list[ResolvedTask]
    stale: bool = False  # Kandev could not be asked: ``waiting`` is what the bot last knew


#: A person's Home blocks with their Kandev account's section added (kandev_slack/surfaces/
#: connect.py ``with_account_blocks`` on kandev_slack/usecases/answering/linking.py's state).
AccountSection = Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]


class SnoozeReader(Protocol):
    """The person's snoozes (kandev_slack/usecases/answering/snooze.py ``Snoozes``)."""

    def snoozes_of(self, user_id: str) -> list[Snooze]: ...


@dataclass(eq=False)
class HomeService:
    queue: WaitingQueue
    cards: CardsRepository
    followups: FollowupsRepository  # the viewer's subscriptions
    viewers: HomeViewersRepository
    slack: SlackGateway
    #: Raised by the publisher after every post or edit.
    changes: Signal
    _: KW_ONLY
    kandev_url: str
    recent_s: float = RECENT_VIEWERS_S
    max_viewers: int = MAX_VIEWERS
    debounce_s: float = DEBOUNCE_S
    spacing_per_view_s: float = SPACING_PER_VIEW_S
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    #: What each person snoozed: off their waiting list, in "💤 Snoozed" (None: no snoozes).
    snoozes: SnoozeReader | None = None
    #: The person's own Kandev account at the top of their Home (Connect, or whom they are
    #: connected as, with Disconnect): their blocks with it (None: no route uses linking).
    account_section: AccountSection | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _notices: dict[str, tuple[str, float]] = field(default_factory=dict, init=False, repr=False)

    # ---- building ------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """What is waiting and what was resolved lately, for everyone (filtered per person by
        :meth:`build`)."""
        try:
            return Snapshot(self.queue.waiting(), self.cards.recent_resolved(RESOLVED_READ))
        except KandevError as exc:
            log.warning("Home: Kandev cannot be asked (%s); showing the bot's own cards", exc)
            resolved = self.cards.recent_resolved(RESOLVED_READ)
            return Snapshot(self.queue.posted_pending(), resolved, stale=True)

    def build(self, user_id: str, snapshot: Snapshot | None = None) -> dict[str, Any]:
        """This person's Home: only the questions they may answer (and so see)."""
        snap = snapshot if snapshot is not None else self.snapshot()
        # What their own Kandev account sees, in routes that use it (issue 32).
        sight = self.queue.sight_of(user_id)
        waiting = most_urgent_first(self.queue.visible_to(user_id, snap.waiting, sight))
        waiting, snoozed = self._without_snoozed(user_id, waiting)
        waiting = sight.unhidden(waiting)  # snoozed or dismissed in their Kandev inbox
        # Identical items in one channel are one row (kandev_slack.usecases.views.waiting.py).
        waiting = group_rows(waiting, self.queue.places()) if waiting else []
        shown = self.queue.shown(waiting[:MAX_WAITING])
        waiting = shown + waiting[len(shown) :]
        recent = self.queue.resolved_visible_to(user_id, snap.resolved, sight)[:MAX_RESOLVED]
        cards = self.cards.many([r.pending_id for r in recent])
        resolved = [(card, self.queue.permalinks.of(card)) for card in cards]
        approvals, approval_others = group_approvals(self.queue.approvals_for(user_id, sight))
        view = render_home(
            waiting,
            resolved,
            kandev_url=self.kandev_url,
            now=self.clock(),
            stale=snap.stale,
            notice=self._notice(user_id),
            approvals=approvals,
            approval_others=approval_others,
            snoozed=snoozed,
        )
        if self.account_section is not None:
            view["blocks"] = self.account_section(user_id, view["blocks"])
        # The person's subscriptions, with a remove button each (at the end of the tab).
        view["blocks"] = with_home_blocks(view["blocks"], self.followups.subscriptions_of(user_id))
        return view

    def _without_snoozed(
        self, user_id: str, waiting: list[Waiting]
    ) -> tuple[list[Waiting], list[tuple[TaskInfo, Snooze]]]:
        """``waiting`` without what the person snoozed, and those snoozed (task, snooze)."""
        mine = {s.pending_id: s for s in self.snoozes.snoozes_of(user_id)} if self.snoozes else {}
        if not mine:
            return waiting, []
        left = [w for w in waiting if w.pending_id not in mine]
        snoozed = [(w.task, mine[w.pending_id]) for w in waiting if w.pending_id in mine]
        return left, snoozed

    # ---- publishing ----------------------------------------------------------------------

    def opened(self, user_id: str) -> None:
        """``app_home_opened``: remember the viewer, publish their Home."""
        self.viewers.home_opened(user_id)
        try:
            self.publish([user_id])
        except SlackError as exc:
            log.warning("Home of %s not published: %s", user_id, exc.error)

    def notice(self, user_id: str, text: str) -> bool:
        """Tell a person something on their Home (for an interaction that happened there, where
        Slack offers no channel or response_url): shown at the top for ``NOTICE_S``."""
        with self._lock:
            self._notices[user_id] = (text, time.monotonic() + NOTICE_S)
        try:
            return self.publish([user_id]) == 1
        except SlackError:
            return False

    def publish(self, user_ids: list[str]) -> int:
        """Publish each person's Home; returns how many succeeded. Stops at a rate limit (the
        caller retries later)."""
        if not user_ids:
            return 0
        snapshot = self.snapshot()
        done = 0
        for user_id in user_ids:
            try:
                self.slack.publish_home(user_id, self.build(user_id, snapshot))
                done += 1
            except SlackError as exc:
                if exc.rate_limited:
                    log.warning("Home refresh rate limited; %d left", len(user_ids) - done)
                    raise
                log.warning("Home of %s not published: %s", user_id, exc.error)
        return done

    def _notice(self, user_id: str) -> str | None:
        with self._lock:
            text, until = self._notices.get(user_id, ("", 0.0))
            if until <= time.monotonic():
                self._notices.pop(user_id, None)
                return None
            return text

    def recent_viewers(self) -> list[str]:
        since = self.clock() - timedelta(seconds=self.recent_s)
        return self.viewers.home_viewers(since=since, limit=self.max_viewers)

    def refresh(self) -> int:
        """Publish a fresh Home to every recent viewer; returns how many were published."""
        return self.publish(self.recent_viewers())

    # ---- the refresh worker --------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            if not self.changes.wait(1.0):
                continue
            if stop.wait(self.debounce_s):
                return
            self.changes.take()
            pause = 0.0
            try:
                published = self.refresh()
                pause = min(published * self.spacing_per_view_s, MAX_SPACING_S)
            except SlackError as exc:
                self.changes.raise_()  # try again after the rate limit
                pause = min(max(exc.retry_after or 1.0, 1.0), MAX_SPACING_S)
            except Exception:
                log.exception("Home refresh failed")
            if pause and stop.wait(pause):
                return
