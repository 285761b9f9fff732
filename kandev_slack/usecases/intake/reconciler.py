"""Kandev -> Slack: bundles resolved elsewhere (in Kandev's web UI, by the agent) end their card.

Two ways in, both reading a bundle's final state from its task's conversation:

- a full read of the active list: every pending card whose bundle left the list
  (:meth:`Reconciler.reconcile`);
- a push hint that a session's pending action went away (``Resolved(session_id)``): only the
  cards of that session, from that session's conversation (:meth:`Reconciler.resolve_session`);
  no list is read. The sessions of the listed bundles are kept in a :class:`SessionIndex`.

A bundle's final state is read from its card's own session (a task may have newer ones). A
reply that cannot be read (a tool error, a malformed or invalid page) is not an answer: the card
stays pending, the next cycle reads again, and /healthz reports ``final_state`` meanwhile; only a
definite not-found makes a card unavailable.

A bundle whose turn was superseded leaves the list while its messages say "pending" forever:
that is never read as waiting. With Kandev's Needs-you inbox on, its history says why
(``superseded``): the card ends at once with that reason ("the agent moved on"); otherwise
(inbox off, or the history does not hold it) it ends after :data:`PENDING_GRACE_S` with the
generic ended line.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from kandev_slack.core.domain import Card, CardOutcome, CardState
from kandev_slack.kandev.errors import KandevError, KandevUnavailable
from kandev_slack.kandev.models import FinalState
from kandev_slack.ops.health import Health
from kandev_slack.store.records import Submission
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.intake.ended import credit_slack_winner, end_synced

log = logging.getLogger(__name__)

#: A bundle missing from the active list whose messages still say "pending" is ended only after
#: it stayed missing this long (guards against a list taken mid-change).
PENDING_GRACE_S = 10.0
#: An answer submitted from Slack within this window owns the card's resolution.
SUBMISSION_GRACE_S = 30.0
#: The /healthz component for final states Kandev answered unreadably.
UNREADABLE = "final_state"
#: Why an unanswered bundle ended, as the inbox history says it (kept as the outcome's reason).
SUPERSEDED = "superseded"
#: Final states a hint may apply while the bundle may still be listed (``unknown`` is left to
#: the full read: the bundle may not be in the conversation yet).
_DECIDED = frozenset({"answered", "rejected", "cancelled", "expired"})


def outcome_from_final(final: FinalState, at: datetime) -> CardOutcome | None:
    """The card outcome for a bundle that left the active list (None: not decided yet)."""
    if final.status == "answered":
        return CardOutcome(state=CardState.ANSWERED, via="kandev", answers=final.answers, at=at)
    if final.status == "rejected":
        return CardOutcome(state=CardState.REJECTED, via="kandev", at=at)
    if final.status in ("cancelled", "expired"):
        return CardOutcome(state=CardState.ENDED, via="kandev", at=at)
    if final.status == "unknown":
        return CardOutcome(state=CardState.UNAVAILABLE, via="kandev", at=at)
    return None


class FinalStates(Protocol):
    """What the reconciler reads from Kandev (kandev_slack.kandev.client.KandevClient)."""

    def final_state(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> FinalState: ...

    def ended_reason(self, workspace_id: str, pending_id: str) -> str | None: ...


class ReconcilerCards(Protocol):
    """What the reconciler calls on the cards (kandev_slack.store.CardsRepository)."""

    def atomic(self) -> AbstractContextManager[None]: ...

    def pending_ids(self) -> list[tuple[str, datetime]]: ...

    def get(self, pending_id: str) -> Card | None: ...

    def transition(
        self, pending_id: str, to: CardOutcome, expected: CardState = CardState.PENDING
    ) -> bool: ...


class ReconcilerSubmissions(Protocol):
    """What the reconciler reads of the answers submitted from Slack
    (kandev_slack.store.SubmissionsRepository)."""

    def submission_in_flight(
        self, pending_id: str, within_s: float, *, besides: str = ""
    ) -> bool: ...

    def won_submission(self, pending_id: str) -> Submission | None: ...


class Edits(Protocol):
    """Where a card's edit is queued (kandev_slack.usecases.outbox.publisher.Publisher)."""

    def enqueue_update(self, card: Card, *, reason: str = "") -> None: ...

    def wake(self) -> None: ...


class SessionIndex:
    """The pending ids of the listed bundles, by Kandev session (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_session: dict[str, set[str]] = {}

    def note(self, session_id: str, pending_id: str) -> None:
        with self._lock:
            self._by_session.setdefault(session_id, set()).add(pending_id)

    def keep(self, active: Collection[str]) -> None:
        """Forget the bundles a full read no longer lists."""
        keep = set(active)
        with self._lock:
            for session_id in list(self._by_session):
                left = self._by_session[session_id] & keep
                if left:
                    self._by_session[session_id] = left
                else:
                    del self._by_session[session_id]

    def of(self, session_id: str) -> list[str]:
        with self._lock:
            return sorted(self._by_session.get(session_id, ()))


class Reconciler:
    """Ends the cards of bundles resolved outside this bot."""

    def __init__(
        self,
        kandev: FinalStates,
        cards: ReconcilerCards,
        submissions: ReconcilerSubmissions,
        audit_log: Audit,
        edits: Edits,
        *,
        clock: Callable[[], datetime],
        sessions: SessionIndex,
        health: Health,
    ) -> None:
        self.kandev, self.cards, self.submissions = kandev, cards, submissions
        self.audit_log, self.edits, self.clock = audit_log, edits, clock
        self.sessions, self.health = sessions, health
        self._missing_since: dict[str, float] = {}
        #: Pending ids whose last final-state read was unreadable (guarded by ``_lock``).
        self._unreadable: set[str] = set()
        self._lock = threading.Lock()

    def reconcile(self, active: Collection[str], started: datetime) -> list[str]:
        """After a full read showed ``active``: end the cards whose bundle left the list
        (cards claimed since ``started`` are left alone); the pending ids resolved."""
        for pending_id in active:
            self._missing_since.pop(pending_id, None)
        resolved = []
        pending = self.cards.pending_ids()
        self._forget_unreadable({pending_id for pending_id, _ in pending} - set(active))
        # Only the cards of bundles that left the list are read whole (with many bundles
        # waiting, decoding every pending card each cycle was most of an idle cycle's CPU).
        for pending_id, created_at in pending:
            if pending_id in active or created_at >= started:
                continue
            card = self.cards.get(pending_id)
            if card is None or card.state is not CardState.PENDING:
                continue  # resolved meanwhile (e.g. an answer from Slack)
            if self._resolve_missing(card):
                resolved.append(pending_id)
        return resolved

    def resolve_session(self, session_id: str) -> tuple[list[str], list[str]]:
        """A hint said ``session_id``'s pending action went away: read the final state of its
        pending cards from that session's conversation. (resolved, still pending) pending ids;
        a card Kandev does not show decided yet is left to a later look or the full read."""
        resolved: list[str] = []
        undecided: list[str] = []
        for pending_id in self.sessions.of(session_id):
            card = self.cards.get(pending_id)
            if card is None or card.state is not CardState.PENDING:
                continue
            if self._submitting(card):
                continue
            final = self._final(card, session_id)
            if final is not None and final.status == "pending" and self._superseded(card):
                if self._end(card, self._superseded_outcome()):
                    resolved.append(pending_id)
                continue
            if final is None or final.status not in _DECIDED:
                undecided.append(pending_id)
                continue
            outcome = outcome_from_final(final, self.clock())
            if outcome is not None and self._end(card, outcome):
                resolved.append(pending_id)
        return resolved, undecided

    def _submitting(self, card: Card) -> bool:
        """A Slack answer is being recorded: the answer use-case owns this card."""
        return self.submissions.submission_in_flight(card.pending_id, SUBMISSION_GRACE_S)

    def _final(self, card: Card, session_id: str | None = None) -> FinalState | None:
        """The bundle's final state, from the card's own session (None: Kandev's reply could
        not be read; a later cycle reads again)."""
        session = card.session_id or session_id
        try:
            final = self.kandev.final_state(card.task_id, card.pending_id, session_id=session)
        except KandevUnavailable:
            raise
        except KandevError as exc:
            log.warning("final state of %s not readable, will retry: %s", card.pending_id, exc)
            self._readable(card.pending_id, False)
            return None
        self._readable(card.pending_id, True)
        return final

    def _readable(self, pending_id: str, readable: bool) -> None:
        """Note whether ``pending_id``'s final state could be read; /healthz says how many
        could not."""
        with self._lock:
            if readable:
                self._unreadable.discard(pending_id)
            else:
                self._unreadable.add(pending_id)
            count = len(self._unreadable)
        if count:
            what = "question's" if count == 1 else "questions'"
            self.health.problem(UNREADABLE, f"{count} {what} final state unreadable; retrying")
        else:
            self.health.clear(UNREADABLE)

    def _forget_unreadable(self, keep: set[str]) -> None:
        """Cards no longer pending, or whose bundle is listed again, are no longer unreadable."""
        with self._lock:
            gone = self._unreadable - keep
        for pending_id in gone:
            self._readable(pending_id, True)

    def _resolve_missing(self, card: Card) -> bool:
        if self._submitting(card):
            return False
        final = self._final(card)
        if final is None:
            return False
        now = self.clock()
        outcome = outcome_from_final(final, now)
        if outcome is None:
            if self._superseded(card):
                return self._end(card, self._superseded_outcome())
            first = self._missing_since.setdefault(card.pending_id, time.monotonic())
            if time.monotonic() - first < PENDING_GRACE_S:
                return False
            outcome = CardOutcome(state=CardState.ENDED, via="kandev", at=now)
        return self._end(card, outcome)

    def _superseded(self, card: Card) -> bool:
        """Whether the inbox history says a new turn superseded the card's bundle (False when
        Kandev runs without the inbox, the history does not hold it, or cannot be read: the
        generic ended line after the grace is what is left to say)."""
        workspace_id = card.workspace_id or card.task.workspace_id
        if not workspace_id:
            return False
        try:
            reason = self.kandev.ended_reason(workspace_id, card.pending_id)
        except KandevUnavailable:
            raise
        except KandevError as exc:
            log.warning("inbox history for %s not readable: %s", card.pending_id, exc)
            return False
        return reason == SUPERSEDED

    def _superseded_outcome(self) -> CardOutcome:
        return CardOutcome(state=CardState.ENDED, via="kandev", reason=SUPERSEDED, at=self.clock())

    def _end(self, card: Card, outcome: CardOutcome) -> bool:
        self._missing_since.pop(card.pending_id, None)
        self._readable(card.pending_id, True)
        outcome = credit_slack_winner(self.submissions, card, outcome)
        return end_synced(self.cards, self.audit_log, self.edits, card, outcome)
