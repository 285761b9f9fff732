"""Kandev -> Slack for approvals: find the agents' tool-permission requests, post each once,
and end its card the way the request ended.

There is no global list of permission requests and no push naming one
(kandev-permissions.md §0, §10): a task is *looked at* — its live requests listed
(``list_pending_agent_permissions_kandev``) — when

- a push hint says one of its sessions now waits on a permission (``on_permission``: only that
  session's requests are listed, on the hints' own loop, ``run_hints``, so a sweep in progress
  never delays a new card),
- a push hint says a session's pending action went away and the bot has an approval card for
  it (``on_resolved``, on the same loop),
- a push hint says the task's status changed (``on_status``, ``task.status_summary.updated``,
  which reaches every reader of the workspace, also with auth on: kandev-identity.md §6) and
  the task is flagged ``permission`` or watched (below): a new request, a resolution, a
  cancelled turn or an agent giving up all send one, and
- every poll interval (``run``): a *full sweep* looks at every task the workspaces' task lists
  flag ``permission`` (a hint, stale after a Kandev restart; every page of them is read) and
  every task with an approval card still waiting. While the hints are up, only every
  ``full_sweep_interval`` (and on every (re)connect of the hints): the other intervals are
  *light* — the task lists alone are read, and only the tasks whose row changed since the last
  read (or that are newly flagged, or whose last look left something to do) are looked at;
  an interval in which nothing changed costs one read per page of the task lists. What the
  rows and the hints both miss is found by the next full sweep. A sweep that fails or
  overruns its deadline is shown in /healthz (``approval_sweep``).

The tasks the light intervals compare are *watched*: those flagged or with a waiting card at the
last look, each with the mark of its row then (``TaskState.mark``).

A listed request without a card is recorded (the store's record_card: one card per request across
replicas and restarts) and posted in its route's channel; a request whose route cannot be
decided is posted nowhere (fail closed) and shown in /healthz. A card whose request left the
list is ended by what the transcript records (``permission_resolution``: the winner's option,
or withdrawn; until it says, the hints' loop looks again every ``RELOOK_S``), never
guessed. A request whose turn is over (Kandev's bug, contract §5: it stays
listed and resolvable, and resolving it wedges the session) is never answered from Slack: the
session's turns are read when the card is posted (a turn cancelled before, e.g. while the bot
was down: the card is posted ended), whenever its task is looked at, and again before a click
is sent (kandev_slack/kandev/approvals/client.py); the cancellation revision recorded at post
time tells a cancel since.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from kandev_slack.config.routing import Routing
from kandev_slack.core.approval import APPROVAL_PREFIX, CANCELLED_OPTION, approval_key
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardOutcome, CardState, NewCard
from kandev_slack.core.signals import Inbox, Signal
from kandev_slack.kandev.approvals.wire import (
    PermissionRecord,
    PermissionRequest,
    SessionCancellation,
    TaskState,
)
from kandev_slack.kandev.errors import (
    KandevAgentStarting,
    KandevAuthError,
    KandevError,
    KandevNotFoundError,
    KandevUnavailable,
)
from kandev_slack.kandev.models import Workspace
from kandev_slack.ops import metrics
from kandev_slack.ops.health import Health
from kandev_slack.store import Submission
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.intake.approval_turns import still_listed, turn_over
from kandev_slack.usecases.intake.ended import credit_slack_winner, end_synced
from kandev_slack.usecases.intake.sweep_watch import SweepWatch
from kandev_slack.usecases.intake.unroutable import Unroutables
from kandev_slack.usecases.leases import SUBMISSION_LEASE_S
from kandev_slack.usecases.people import KandevPeople
from kandev_slack.usecases.tasks import TaskDirectory, TaskUnknown

log = logging.getLogger(__name__)

#: The /healthz component of approvals whose route cannot be decided.
UNROUTABLE = "unroutable_approvals"
#: The /healthz component of a sweep that failed, left tasks unread or overran its deadline.
SWEEP = "approval_sweep"
#: How long a sweep may take before /healthz says so (seconds).
SWEEP_DEADLINE_S = 120.0
#: A request missing from its task's list whose transcript does not say how it ended (Kandev
#: restarted under it) is ended after this long (a list read racing its creation is not).
MISSING_GRACE_S = 3.0
#: How often the hints' loop looks again at a card whose request left its list but whose end
#: the transcript does not say yet (seconds): Kandev marks a withdrawn request ``expired`` a
#: moment after the list empties, or never (an agent stopped before it says so), so its card
#: ends within this of the mark or of :data:`MISSING_GRACE_S`, not a poll interval later.
RELOOK_S = 0.5
#: How often a full sweep runs while the push hints are up (seconds; KANDEV_FULL_SWEEP_INTERVAL).
FULL_SWEEP_S = 60.0
#: The mark of a watched task found in no task list.
ABSENT = ""
#: The mark of a watched task whose last look left something to do: no row has it, so the next
#: interval looks at it again.
UNSETTLED = "\x00unsettled"
#: How long a look is remembered for the hints it answers (seconds).
LOOKS_KEPT_S = 60.0


class ApprovalsKandev(Protocol):
    """The permission calls (kandev_slack.kandev.approvals.client.PermissionsClient)."""

    def list_pending(
        self, task_id: str, session_id: str | None = None
    ) -> list[PermissionRequest]: ...

    def task_states(self, workspace_id: str) -> list[TaskState]: ...

    def cancellation(self, session_id: str) -> SessionCancellation | None: ...

    def turn_ended(self, session_id: str, asked_at: datetime) -> bool | None: ...

    def record(self, task_id: str, session_id: str, request_id: str) -> PermissionRecord | None: ...


class ApprovalCards(Protocol):
    """What approvals call on the cards (kandev_slack.store.CardsRepository)."""

    def atomic(self) -> AbstractContextManager[None]: ...

    def get(self, pending_id: str) -> Card | None: ...

    def record_card(self, new: NewCard) -> bool: ...

    def pending_of_kind(self, prefix: str) -> list[Card]: ...

    def transition(
        self, pending_id: str, to: CardOutcome, expected: CardState = CardState.PENDING
    ) -> bool: ...


class ApprovalSubmissions(Protocol):
    """Whether a Slack click owns a card now, and who won
    (kandev_slack.store.SubmissionsRepository)."""

    def submission_in_flight(
        self, pending_id: str, within_s: float, *, besides: str = ...
    ) -> bool: ...

    def won_submission(self, pending_id: str) -> Submission | None: ...


class ApprovalPosts(Protocol):
    """Where cards are posted and edited (kandev_slack.usecases.outbox.publisher.Publisher)."""

    def enqueue_post(self, card: Card) -> None: ...

    def enqueue_update(self, card: Card, *, reason: str = "") -> None: ...

    def wake(self) -> None: ...


@dataclass
class SweepReport:
    """One look: tasks looked at, cards recorded, cards ended (their keys), the tasks that
    could not be read (Kandev refused or garbled their list), those whose look left something
    to do (an agent starting, a request not posted yet, a card whose request left but whose end
    is not known yet: looked at again next interval) and those with nothing live and no card
    waiting (``quiet``: no longer watched unless flagged)."""

    tasks: int = 0
    posted: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    unsettled: list[str] = field(default_factory=list)
    quiet: list[str] = field(default_factory=list)


@dataclass(eq=False)
class Approvals:
    kandev: ApprovalsKandev
    #: The workspaces the bot's token sees (kandev_slack.kandev.client.KandevClient.workspaces).
    workspaces: Callable[[], list[Workspace]]
    cards: ApprovalCards
    submissions: ApprovalSubmissions
    audit_log: Audit
    routing: Routing
    tasks: TaskDirectory
    posts: ApprovalPosts
    health: Health
    clock: Callable[[], datetime]
    #: Wakes the sweep's loop: the hints reconnected (and shut-down).
    wakeup: Signal
    #: Listed requests whose route cannot be decided yet, by card key (said in /healthz as
    #: :data:`UNROUTABLE`).
    unroutable: Unroutables
    #: How the sweeps are said in /healthz (:data:`SWEEP`, deadline :data:`SWEEP_DEADLINE_S`).
    sweep_watch: SweepWatch
    poll_interval: float = 5.0
    #: Seconds between two full sweeps while the hints are up (every interval otherwise).
    full_sweep_interval: float = FULL_SWEEP_S
    #: Who the Kandev account a request was resolved with is (``permission_resolution``'s
    #: actor): named on the card (None: only Slack people who clicked are named).
    people: KandevPeople | None = None
    #: Wakes the hints' loop (``run_hints``): a hint named a session.
    hints_wakeup: Signal = field(default_factory=lambda: Signal("approval hints"))
    #: (task, session, when) a hint said to look at (filled on the hints thread).
    hinted: Inbox[tuple[str, str, float]] = field(init=False)
    #: (session, when) a hint said its pending action went away (filled on the hints thread).
    resolved: Inbox[tuple[str, float]] = field(init=False)
    #: Cards whose request left its list and whose end is not known yet: since when, and their
    #: task (looked at again every :data:`RELOOK_S` by the hints' loop until they end).
    _missing_since: dict[str, tuple[float, str]] = field(default_factory=dict)
    _next_relook: float = 0.0
    _sweep_due: bool = True
    #: Whether the push hints are connected (a light interval is enough only then).
    _hints_live: bool = False
    #: The watched tasks, each with the mark of its row when it was last looked at.
    _marks: dict[str, str] = field(default_factory=dict)
    _marks_lock: threading.Lock = field(default_factory=threading.Lock)
    #: When each (task, session) was last looked at to the end (session "": the whole task).
    _looked: dict[tuple[str, str], float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.hinted = Inbox("approval hints", wakes=self.hints_wakeup)
        self.resolved = Inbox("sessions resolved", wakes=self.hints_wakeup)

    # ---- what wakes it (called on the hints thread: hand over only) -------------------------

    def on_permission(self, task_id: str, session_id: str = "") -> None:
        """``session_id`` of ``task_id`` now waits on a permission (no session: any of the
        task's)."""
        if task_id:
            self.hinted.put((task_id, session_id, time.monotonic()))

    def on_resolved(self, session_id: str) -> None:
        """A session's pending action went away: its approvals' task is looked at again."""
        if session_id:
            self.resolved.put((session_id, time.monotonic()))

    def on_status(self, task_id: str, session_id: str = "", pending_action: str = "") -> None:
        """``task_id``'s status changed (``session_id``: its primary session): looked at when
        it waits on a permission or is watched (a card of it may have ended, its turn with it);
        the status of every other task is none of the approvals' business."""
        if not task_id:
            return
        if pending_action == "permission" or self.watching(task_id):
            self.hinted.put((task_id, session_id, time.monotonic()))

    def on_connected(self) -> None:
        """The hints (re)connected: what they missed is found by a full sweep."""
        self._hints_live = True
        self._sweep_due = True
        self.wakeup.raise_()

    def on_disconnected(self) -> None:
        """The hints are lost: every interval is a full sweep until they are back."""
        self._hints_live = False

    def watching(self, task_id: str) -> bool:
        with self._marks_lock:
            return task_id in self._marks

    # ---- the loop ------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """An interval every ``poll_interval``: a full sweep after a reconnect of the hints,
        every ``full_sweep_interval``, and every time while the hints are down (or off); a
        light one otherwise."""
        next_sweep = next_full = 0.0
        while not stop.is_set():
            self.wakeup.take()  # cleared first: a reconnect during the sweep asks for another
            now = time.monotonic()
            if self._sweep_due or now >= next_sweep:
                full = self._sweep_due or not self._hints_live or now >= next_full
                self._sweep_due = False
                next_sweep = now + self.poll_interval
                cpu = time.thread_time()
                if full:
                    next_full = now + self.full_sweep_interval
                    self.sweep_and_report()
                else:
                    self.sweep_watch.run(self.light_sweep)
                metrics.approval_sweep("full" if full else "light", time.thread_time() - cpu)
            self.wakeup.wait(max(0.05, min(self.poll_interval, next_sweep - time.monotonic())))

    def run_hints(self, stop: threading.Event) -> None:
        """The looks push hints ask for, each on its own, whatever a sweep is doing, and
        every :data:`RELOOK_S` those of the cards whose end is not known yet."""
        while not stop.is_set():
            self.hints_wakeup.wait(RELOOK_S if self._missing_since else None)
            self.hints_wakeup.take()
            if not stop.is_set():
                self.serve_hints()

    def serve_hints(self) -> SweepReport:
        """List the sessions hints said wait on a permission or changed (post what is new),
        and the tasks of the waiting cards of the sessions they said were resolved (end what
        left); a hint that came before a look of its task began is answered by that look. The
        tasks of the cards whose end is not known yet are looked at again when due. A look that
        fails is left to the next interval."""
        report = SweepReport()
        looks: dict[tuple[str, str], float] = {}
        now = time.monotonic()
        for task_id in self._relooks_due(now):
            looks[task_id, ""] = now
        for task_id, session_id, at in self.hinted.drain():
            looks[task_id, session_id] = max(at, looks.get((task_id, session_id), 0.0))
        sessions: dict[str, float] = {}
        for session_id, at in self.resolved.drain():
            sessions[session_id] = max(at, sessions.get(session_id, 0.0))
        if sessions:
            for card in self.cards.pending_of_kind(APPROVAL_PREFIX):
                if card.session_id in sessions:
                    at = sessions[card.session_id]
                    looks[card.task_id, ""] = max(at, looks.get((card.task_id, ""), 0.0))
        for (task_id, session_id), at in looks.items():
            if self._looked_since(task_id, session_id, at):
                continue
            try:
                one = self.look_at(task_id, session_id=session_id)
            except KandevError as exc:
                report.unread.append(task_id)
                log.warning("approvals: task %s not looked at, left to the sweep: %s", task_id, exc)
            except Exception:
                report.unread.append(task_id)
                log.exception("approvals: a hinted look failed")
            else:
                self._merge(report, one)
                if not one.quiet:  # its status hints matter from now on
                    with self._marks_lock:
                        self._marks.setdefault(task_id, UNSETTLED)
        self._forget_old_looks()
        return report

    def sweep_and_report(self) -> SweepReport | None:
        """One full sweep, said in /healthz: failed, tasks left unread, or longer than its
        deadline (until a sweep completes in time). None: it failed."""
        return self.sweep_watch.run(self.sweep)

    def sweep(self) -> SweepReport:
        """Look at every task the workspaces flag ``permission`` (every page of their tasks)
        and every task with an approval card still waiting; end what left, post what is new;
        watch them from then on. A task whose list Kandev refuses is skipped (``unread``);
        Kandev unreachable, or a workspace's tasks unreadable, fails the sweep."""
        states = self._task_states()
        tasks: dict[str, list[Card]] = {t: [] for t, s in states.items() if s.flagged}
        for card in self.cards.pending_of_kind(APPROVAL_PREFIX):
            tasks.setdefault(card.task_id, []).append(card)
        report, marks = self._look_at_each(tasks, states)
        with self._marks_lock:
            # what the hints' loop began watching meanwhile stays watched
            hinted = {t: m for t, m in self._marks.items() if m == UNSETTLED and t not in marks}
            self._marks = {t: m for t, m in marks.items() if m is not None} | hinted
        self.unroutable.report()
        return report

    def light_sweep(self) -> SweepReport:
        """Read the workspaces' task lists and look only at the tasks whose row changed since
        they were last looked at (or that are newly flagged ``permission``, gone from the
        lists, or whose last look left something to do). Nothing changed: no other read."""
        states = self._task_states()
        with self._marks_lock:
            known = dict(self._marks)
        changed = [
            task_id
            for task_id, state in states.items()
            if (known[task_id] != state.mark if task_id in known else state.flagged)
        ]
        changed += [t for t, mark in known.items() if t not in states and mark != ABSENT]
        if not changed:
            return SweepReport()
        waiting: dict[str, list[Card]] = {t: [] for t in changed}
        for card in self.cards.pending_of_kind(APPROVAL_PREFIX):
            if card.task_id in waiting:
                waiting[card.task_id].append(card)
        report, marks = self._look_at_each(waiting, states)
        with self._marks_lock:
            for task_id, mark in marks.items():
                if mark is None:
                    self._marks.pop(task_id, None)
                else:
                    self._marks[task_id] = mark
        self.unroutable.report()
        return report

    def _task_states(self) -> dict[str, TaskState]:
        states: dict[str, TaskState] = {}
        for workspace in self.workspaces():
            for state in self.kandev.task_states(workspace.id):
                states[state.task_id] = state
        return states

    def _look_at_each(
        self, tasks: dict[str, list[Card]], states: dict[str, TaskState]
    ) -> tuple[SweepReport, dict[str, str | None]]:
        """Look at each task (with its waiting cards); the mark each is watched with from now
        on (None: not watched — nothing live, no card waiting, not flagged)."""
        report = SweepReport()
        marks: dict[str, str | None] = {}
        for task_id, cards in tasks.items():
            try:
                one = self.look_at(task_id, cards)
            except (KandevUnavailable, KandevAuthError):
                raise
            except KandevError as exc:
                report.unread.append(task_id)
                marks[task_id] = UNSETTLED
                log.warning("approvals: task %s could not be looked at: %s", task_id, exc)
                continue
            self._merge(report, one)
            state = states.get(task_id)
            if one.unsettled:
                marks[task_id] = UNSETTLED
            elif one.quiet and (state is None or not state.flagged):
                marks[task_id] = None
            else:
                marks[task_id] = state.mark if state is not None else ABSENT
        return report, marks

    def look_at(
        self, task_id: str, waiting: list[Card] | None = None, *, session_id: str = ""
    ) -> SweepReport:
        """List ``task_id``'s live requests (only ``session_id``'s, when given): post those
        without a card, end the cards of those that left (``waiting``: the task's approval
        cards still waiting, when known)."""
        report = SweepReport(tasks=1)
        started = time.monotonic()
        try:
            listed = self.kandev.list_pending(task_id, session_id or None)
        except KandevAgentStarting:
            report.unsettled.append(task_id)
            return report  # the agent is starting: the next look lists it
        except KandevNotFoundError:
            listed = []
        live = {approval_key(r.request_id): r for r in listed}
        settled = True
        # No lock held through Kandev's answers: the hints' loop and a sweep may look at the
        # same task at once (a hint never waits for a sweep's slow read), and need not — a
        # card is recorded once (the store), ended once (its transition), whoever looks.
        for key, request in live.items():
            self._missing_since.pop(key, None)
            if self.cards.get(key) is not None:
                continue
            if self.unroutable.due(key) and self._post(request):
                report.posted.append(key)
            elif self.cards.get(key) is None:
                settled = False  # not routable yet, or its session went: looked at again
        if waiting is None:
            waiting = self._waiting_of(task_id, session_id)
        for card in waiting:
            is_live = card.pending_id in live
            if self._end_if_turn_over(card) if is_live else self._end(card):
                report.ended.append(card.pending_id)
            elif not is_live:
                settled = False  # how it ended is not known yet
        if not settled:
            report.unsettled.append(task_id)
        else:
            self._looked[task_id, session_id] = started
            if not live:
                report.quiet.append(task_id)
        return report

    def _relooks_due(self, now: float) -> list[str]:
        """The tasks of the cards whose request left and whose end is not known yet, every
        :data:`RELOOK_S` (a card ended meanwhile, by any path, is forgotten)."""
        if now < self._next_relook or not self._missing_since:
            return []
        self._next_relook = now + RELOOK_S
        tasks: set[str] = set()
        for pending_id, (_, task_id) in list(self._missing_since.items()):
            card = self.cards.get(pending_id)
            if card is None or card.state is not CardState.PENDING:
                self._missing_since.pop(pending_id, None)
            else:
                tasks.add(task_id)
        return sorted(tasks)

    def _looked_since(self, task_id: str, session_id: str, at: float) -> bool:
        """Whether a look of the task (or of that session) began after ``at``."""
        whole = self._looked.get((task_id, ""), 0.0)
        return max(whole, self._looked.get((task_id, session_id), 0.0)) > at

    def _forget_old_looks(self) -> None:
        if len(self._looked) > 1024:
            old = time.monotonic() - LOOKS_KEPT_S
            for key in [k for k, at in list(self._looked.items()) if at < old]:
                self._looked.pop(key, None)

    def _waiting_of(self, task_id: str, session_id: str = "") -> list[Card]:
        return [
            c
            for c in self.cards.pending_of_kind(APPROVAL_PREFIX)
            if c.task_id == task_id and (not session_id or c.session_id == session_id)
        ]

    # ---- a new request -------------------------------------------------------------------

    def _post(self, request: PermissionRequest) -> bool:
        key = approval_key(request.request_id)
        try:
            task = self.tasks.info(request.task_id)
        except TaskUnknown as exc:
            return self.unroutable.failed(key, exc.reason)
        route = self.routing.route_for(task)
        if route is None:
            name = task.workspace_name or task.workspace_id
            reason = f"no channel for workspace {name!r}: add a [[route]] or a default channel"
            return self.unroutable.failed(key, reason)
        self.unroutable.routed(key)
        cancellation = self.kandev.cancellation(request.session_id)
        ended = self.kandev.turn_ended(request.session_id, request.created_at)
        if cancellation is None or ended is None:
            return False  # the session is gone: nothing to approve any more
        if ended and not still_listed(self.kandev, request.task_id, request.session_id, key):
            return False  # answered meanwhile, and the turn went on to its end
        approval = request.approval(cancellation_revision=cancellation.revision)
        if not self.cards.record_card(NewCard(approval, task, route.channel)):
            return False  # another replica (or an earlier look) has it
        if ended or cancellation.pending:
            # Its turn is over (cancelled while nobody looked): posted ended, never answerable.
            outcome = CardOutcome(state=CardState.ENDED, reason="turn_cancelled", at=self.clock())
            if self.cards.transition(key, outcome):
                self.audit_log.audit(key, None, "ended", "kandev", "synced", "turn_cancelled")
        card = self.cards.get(key)
        if card is not None:
            self.posts.enqueue_post(card)
            self.audit_log.audit(key, None, "post", "kandev", "queued", route.channel)
        return True

    # ---- how one ended ---------------------------------------------------------------------

    def _end(self, card: Card) -> bool:
        """A request left its task's list: end its card as the transcript says it ended."""
        if self.submissions.submission_in_flight(card.pending_id, SUBMISSION_LEASE_S):
            return False  # a Slack click is resolving it: the answer pipeline ends it
        approval = card.approval
        try:
            record = self.kandev.record(card.task_id, card.session_id, approval.request_id)
        except KandevError as exc:
            log.warning("how approval %s ended is not readable yet: %s", card.pending_id, exc)
            return False
        now = self.clock()
        outcome = self._outcome_of(card, record, now)
        if outcome is None:
            return False
        return self._transition(card, outcome)

    def _outcome_of(
        self, card: Card, record: PermissionRecord | None, now: datetime
    ) -> CardOutcome | None:
        if record is not None and record.claimed and record.resolution is not None:
            chosen = record.resolution
            if chosen.option_id == CANCELLED_OPTION:
                return CardOutcome(state=CardState.ENDED, reason="cancelled", at=now)
            allowed = card.approval.allows(chosen.option_id, chosen.option_kind)
            state = CardState.ANSWERED if allowed else CardState.REJECTED
            answer = Answer(question_id="", selected_options=[chosen.option_id])
            outcome = CardOutcome(state=state, answers=[answer], at=now)
            if self.people is not None:
                outcome = self.people.credit(outcome, chosen.actor)
            return credit_slack_winner(self.submissions, card, outcome)
        if record is not None and record.withdrawn:
            return CardOutcome(state=CardState.ENDED, at=now)
        # Not in the list, and the transcript does not say (Kandev restarted under it, or the
        # list raced its creation): withdrawn once it stays that way for a moment.
        now_s = time.monotonic()
        if card.pending_id not in self._missing_since:
            if not self._missing_since:
                self._next_relook = now_s + RELOOK_S
            self._missing_since[card.pending_id] = (now_s, card.task_id)
            self.hints_wakeup.raise_()  # the hints' loop looks again every RELOOK_S from now
        first, _ = self._missing_since[card.pending_id]
        if now_s - first < MISSING_GRACE_S:
            return None
        return CardOutcome(state=CardState.ENDED, at=now)

    def _end_if_turn_over(self, card: Card) -> bool:
        """A card whose request is still listed but whose turn is over (cancelled since it was
        posted, or given up on by the agent) says it cannot be answered from Slack: resolving
        it would wedge the session (contract §5)."""
        if not turn_over(self.kandev, self.submissions, card):
            return False
        outcome = CardOutcome(state=CardState.ENDED, reason="turn_cancelled", at=self.clock())
        return self._transition(card, outcome)

    def _transition(self, card: Card, outcome: CardOutcome) -> bool:
        self._missing_since.pop(card.pending_id, None)
        return end_synced(self.cards, self.audit_log, self.posts, card, outcome)

    @staticmethod
    def _merge(report: SweepReport, one: SweepReport) -> None:
        report.tasks += one.tasks
        report.posted += one.posted
        report.ended += one.ended
        report.unread += one.unread
        report.unsettled += one.unsettled
        report.quiet += one.quiet
