"""Slack -> Kandev: the one use-case that resolves a bundle on behalf of a Slack user.

An admitted interaction (kandev_slack/usecases/answering/admission.py decided it may go ahead)
brings an answer or a
rejection. This module checks what Kandev would refuse, records the submission durably (so a
redelivered interaction never reaches Kandev twice), calls Kandev, and applies Kandev's verdict:
the card shows the winner, and the :class:`~kandev_slack.usecases.answering.verdicts.Verdict` says
what happened
(a kind and its data; the edge words it). A new outcome goes in :meth:`AnswerService._apply`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime

from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardOutcome, CardState
from kandev_slack.core.limits import KANDEV_MAX_TEXT as MAX_TEXT
from kandev_slack.kandev import models as reply
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import (
    KandevAuthError,
    KandevError,
    KandevUnavailable,
    KandevUnconfirmed,
)
from kandev_slack.kandev.models import Outcome, Resolution
from kandev_slack.kinds.registry import label_of_key, spec_of
from kandev_slack.ops import metrics
from kandev_slack.store import AuditRepository, CardsRepository, Submission, SubmissionsRepository
from kandev_slack.usecases.answering import resolving
from kandev_slack.usecases.answering.admission import Admitted
from kandev_slack.usecases.answering.verdicts import (
    Attempt,
    Problem,
    Verdict,
    VerdictKind,
    repeat_of,
)
from kandev_slack.usecases.identity import Acting, Identities, Link
from kandev_slack.usecases.leases import SUBMISSION_LEASE_S, InFlight
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.people import KandevPeople

__all__ = ["AnswerService", "Begun"]

log = logging.getLogger(__name__)

#: How long a losing submission waits for a concurrent Slack submission of the same bundle to
#: finish, so that the loser (and the card) can name the Slack user who won.
WINNER_WAIT_S = 3.0
#: The take-over count of a submission held by the process that recorded it (see
#: ``SubmissionsRepository.hold_submission``).
RECORDED = 0


@dataclass
class Begun:
    """A submission recorded durably (``begin_submission``) and not sent to Kandev yet.

    From :meth:`AnswerService.begin` until :meth:`AnswerService.complete` returns, its key is
    held in ``in_flight``, so this process renews its lease and crash recovery leaves it alone
    while the process lives (and re-sends it once the process is gone). ``duplicate``: the same
    submission was already recorded (a redelivery); it holds nothing and is never sent again.
    """

    attempt: Attempt
    card: Card
    key: str
    #: Whose Kandev account it is sent with (None: the bot's).
    acting: Acting[KandevClient] | None = None
    duplicate: bool = False
    begun_at: float = field(default_factory=time.monotonic)  # the click recorded
    #: When it was first sent (just before: Kandev's record of a win of its is later).
    first_sent: datetime = field(default_factory=lambda: datetime.now(UTC))
    lease: ExitStack = field(default_factory=ExitStack, repr=False, compare=False)

    def release(self) -> None:
        """Stop renewing the lease (idempotent)."""
        self.lease.close()


@dataclass(eq=False)
class AnswerService:
    kandev: KandevClient
    cards: CardsRepository
    submissions: SubmissionsRepository
    audit_log: AuditRepository
    publisher: Publisher
    #: Submissions this process is sending (their leases are renewed; see leases.py).
    in_flight: InFlight
    #: Whose Kandev account each submission is sent with (a refused token breaks a link).
    identities: Identities[KandevClient]
    _: KW_ONLY
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    #: Who the Kandev account an approval's winner chose with is (Kandev records it): named
    #: on the card (None: accounts are not named, only the Slack people who clicked).
    people: KandevPeople | None = None

    def submit(
        self, admitted: Admitted, *, answers: tuple[Answer, ...] = (), reason: str = ""
    ) -> Verdict:
        """Check, record, send and apply one admitted attempt (:meth:`begin`, :meth:`complete`)."""
        begun = self.begin(admitted, answers=answers, reason=reason)
        return begun if isinstance(begun, Verdict) else self.complete(begun)

    def begin(
        self,
        admitted: Admitted,
        *,
        answers: tuple[Answer, ...] = (),
        reason: str = "",
        view_id: str = "",
    ) -> Verdict | Begun:
        """Everything before Kandev: local validation and the durable record of the
        submission. A Verdict is a refusal (audited); a Begun must be passed to
        :meth:`complete`. Never waits for another submission (a duplicate returns at once).
        ``view_id``: the modal it comes from, recorded so crash recovery can show the result
        there."""
        request, card = admitted.request, admitted.card
        attempt = Attempt(
            pending_id=card.pending_id,
            user_id=request.user_id,
            action=request.action,
            source=request.source,
            answers=answers,
            reason=reason,
            via=request.via,
            view_id=view_id,
            kandev_user=admitted.acting.kandev_user_id,
        )
        problem = self._local_problem(card, attempt)
        if problem is not None:
            verdict = Verdict("invalid", card, action=attempt.action, problem=problem)
            self._audit(attempt, verdict, kandev_user=_kandev_user(admitted.acting))
            return verdict
        key = attempt.key()
        first_sent = self.clock()
        if not self.submissions.begin_submission(
            attempt.pending_id, key, attempt.user_id, attempt.content()
        ):
            return Begun(attempt, card, key, admitted.acting, duplicate=True)
        begun = Begun(attempt, card, key, admitted.acting, first_sent=first_sent)
        begun.lease.enter_context(self.in_flight.hold(key))
        return begun

    def complete(self, begun: Begun, *, sending: Callable[[], None] | None = None) -> Verdict:
        """Send a begun submission to Kandev, apply the outcome, close it and audit it.
        ``sending``: called right before the call to Kandev (or not at all when none is made).

        Every way the call can end has a definite verdict: Kandev's reply (:meth:`_apply`),
        Kandev unreachable or refusing the token (not recorded: the submission is dropped so
        the card can be answered again), or no reply after an attempt that may have reached
        Kandev (unconfirmed: the submission stays unfinished and crash recovery settles it
        by re-sending, which is safe)."""
        attempt, card, key = begun.attempt, begun.card, begun.key
        kandev_user = _kandev_user(begun.acting)
        if begun.duplicate:
            verdict = self._duplicate(key, card, attempt)
            self._audit(attempt, verdict, kandev_user=kandev_user)
            return verdict
        try:
            # The fence right before the call: still this process's, with a live lease. One
            # frozen past it leaves the answer to crash recovery (here or on another replica).
            if not self.submissions.hold_submission(key, RECORDED, SUBMISSION_LEASE_S):
                log.warning("answer for %s not sent: its lease ran out", attempt.pending_id)
                return Verdict("unconfirmed", card, action=attempt.action)
            acting = begun.acting
            kandev = acting.kandev if acting is not None else self.kandev
            if sending is not None:
                sending()
            try:
                outcome = resolving.send(kandev, card, attempt, first_sent=begun.first_sent)
            except KandevAuthError as exc:
                if acting is not None and acting.link is not None:
                    # The person's own token was refused: their link is broken, nothing sent.
                    self.identities.refused_token(acting)
                    verdict = Verdict("relink", card, action=attempt.action)
                else:
                    verdict = Verdict("not_recorded", card, action=attempt.action, cause="auth")
                log.warning("answer for %s not recorded: %s", attempt.pending_id, exc)
                self._close(key, verdict)
                self._audit(attempt, verdict, str(exc), kandev_user=kandev_user)
                return verdict
            except KandevUnconfirmed as exc:
                log.warning("answer for %s not confirmed by Kandev: %s", attempt.pending_id, exc)
                outcome = reply.Unconfirmed(str(exc), earlier_attempt=True)
            except KandevUnavailable as exc:
                log.warning("answer for %s not recorded: %s", attempt.pending_id, exc)
                verdict = Verdict("not_recorded", card, action=attempt.action, cause="unreachable")
                self._close(key, verdict)
                self._audit(attempt, verdict, str(exc), kandev_user=kandev_user)
                return verdict
            if isinstance(outcome, reply.Unconfirmed) and not outcome.earlier_attempt:
                # Kandev replied, unreadably: it is done with the call, so its record tells.
                outcome = self._read_back(card, attempt, begun.first_sent) or outcome
            as_seen = self.as_the_bot_sees(acting, card, attempt, outcome, begun.first_sent)
            if as_seen is None:
                verdict = Verdict("not_visible", card, action=attempt.action)
                self._close(key, verdict)
                self._audit(attempt, verdict, _describe(outcome), kandev_user=kandev_user)
                return verdict
            link = acting.link if acting is not None else None
            verdict = self._apply(card, attempt, as_seen, key, link)
            with self.cards.atomic():  # how it ended and its audit entry: one write
                self._close(key, verdict)
                self._audit(attempt, verdict, _describe(outcome), kandev_user=kandev_user)
            metrics.answered_in(time.monotonic() - begun.begun_at)
        finally:
            begun.release()
        return verdict

    def as_the_bot_sees(
        self,
        acting: Acting[KandevClient] | None,
        card: Card,
        attempt: Attempt,
        outcome: Outcome,
        first_sent: datetime,
    ) -> Outcome | None:
        """The outcome to apply to the card, or None when the item is hidden from the person
        only (the card stays as it is, answerable by others; they are told they cannot see
        it). A person's own token told "not found" or "no longer active": Kandev says the same
        for an item their account cannot see, so their reply never ends the card by itself
        (never "Unavailable" because one person cannot see it). The bot's own read decides:
        still waiting there, or not telling (an approval's transcript read says nothing of a
        request still waiting), it is hidden from them; resolved or gone there, that is applied
        — a resolution "like theirs" as someone else's, since Kandev refused their call."""
        if acting is None or acting.link is None:
            return outcome
        if not isinstance(outcome, reply.NotActive | reply.NotFound):
            return outcome
        seen = self._read_back(card, attempt, first_sent)
        match seen:
            case None | reply.NotRecorded() | reply.Unconfirmed():
                return None
            case reply.Won(resolution=resolution):
                return reply.Lost(resolution)
        return seen

    def _close(self, key: str, verdict: Verdict) -> None:
        """Record how a submission ended. Not recorded: forget it (nothing reached Kandev, so
        the same answer may be sent again). Unconfirmed: leave it for crash recovery."""
        if verdict.kind in ("not_recorded", "not_visible", "relink"):
            self.submissions.drop_submission(key)
        elif verdict.kind != "unconfirmed":
            self.submissions.finish_submission(key, verdict.kind, repeat_of(verdict))

    def read_back(self, attempt: Attempt, first_sent: datetime) -> Outcome | None:
        """What Kandev recorded for this attempt's bundle, read without sending anything
        (None: the card is unknown, or Kandev's record does not tell)."""
        card = self.cards.get(attempt.pending_id)
        return None if card is None else self._read_back(card, attempt, first_sent)

    def _read_back(self, card: Card, attempt: Attempt, first_sent: datetime) -> Outcome | None:
        try:
            return resolving.read_back(self.kandev, card, attempt, first_sent=first_sent)
        except KandevError as exc:
            log.warning("could not read what Kandev recorded for %s: %s", card.pending_id, exc)
            return None

    # ---- internals -----------------------------------------------------------------------

    def apply_outcome(self, attempt: Attempt, outcome: Outcome, key: str) -> Verdict:
        """Apply Kandev's reply to a submission sent outside :meth:`submit` (crash recovery
        re-sends unfinished ones) to its card, as :meth:`submit` would."""
        card = self.cards.get(attempt.pending_id)
        if card is None:
            return Verdict("unknown_bundle", action=attempt.action)
        # Re-sent as the person's own account when they act with one (recovery.py).
        link = self.identities.linked(attempt.user_id, card.task)
        return self._apply(card, attempt, outcome, key, link)

    def _apply(
        self, card: Card, attempt: Attempt, outcome: Outcome, key: str, link: Link | None
    ) -> Verdict:
        """Apply Kandev's reply to an attempt sent with ``link``'s account (None: the bot's)."""
        now, action = self.clock(), attempt.action
        match outcome:
            case reply.Won(resolution=res):
                result = self._outcome(
                    res, now, by_user=attempt.user_id, reason=attempt.reason, link=link
                )
                return Verdict("won", self._resolve(card, result, force=True), action=action)
            case reply.Lost(resolution=res, uncertain=uncertain):
                return self._lost(card, attempt, res, key, now, uncertain=uncertain, link=link)
            case reply.NotActive(reason=why):
                result = CardOutcome(state=CardState.ENDED, via="kandev", reason=why, at=now)
                return Verdict("ended", self._resolve(card, result), action=action)
            case reply.NotFound():
                result = CardOutcome(state=CardState.UNAVAILABLE, via="kandev", at=now)
                return Verdict("unavailable", self._resolve(card, result), action=action)
            case reply.Invalid(message=msg):
                return Verdict("invalid", card, action=action, problem=Problem(msg))
            case reply.NotRecorded(retry_after=wait):
                return Verdict(
                    "not_recorded", card, action=action, cause="refused", retry_after=wait
                )
            case reply.Unconfirmed():
                return Verdict("unconfirmed", card, action=action)
        raise AssertionError(f"unexpected outcome {outcome!r}")

    def _lost(
        self,
        card: Card,
        attempt: Attempt,
        res: Resolution,
        key: str,
        now: datetime,
        *,
        uncertain: bool = False,
        link: Link | None = None,
    ) -> Verdict:
        """Kandev has another resolution: this person's earlier one, or someone else's.
        ``uncertain``: it may be this very submission's (a maybe-delivered attempt); unless a
        Slack winner is known, the card says "in Kandev" and the verdict is ``undecided``.
        ``link``: the account this attempt was sent with (None: the bot's)."""
        earlier = self._slack_winner(card.pending_id, key)
        if earlier is not None and earlier.user == attempt.user_id:
            result = self._outcome(res, now, by_user=attempt.user_id, link=link)
            updated = self._resolve(card, result)
            return Verdict("already_answered", updated, action=attempt.action, outcome=result)
        winner = earlier.user if earlier is not None else None
        theirs = self.identities.linked(winner, card.task) if winner is not None else None
        result = self._outcome(res, now, by_user=winner, link=theirs)
        updated = self._resolve(card, result)
        kind: VerdictKind = "undecided" if uncertain and earlier is None else "lost"
        return Verdict(kind, updated, action=attempt.action, outcome=result)

    def _slack_winner(self, pending_id: str, own_key: str) -> Submission | None:
        """The Slack submission that won, waiting briefly while a concurrent one (the likely
        winner of a race between two Slack users) is still on its way back from Kandev."""
        deadline = time.monotonic() + WINNER_WAIT_S
        while True:
            won = self.submissions.won_submission(pending_id)
            if won is not None or time.monotonic() >= deadline:
                return won
            if not self.submissions.submission_in_flight(
                pending_id, SUBMISSION_LEASE_S, besides=own_key
            ):
                return self.submissions.won_submission(pending_id)
            time.sleep(0.05)

    def _outcome(
        self,
        res: Resolution,
        at: datetime,
        *,
        by_user: str | None,
        reason: str = "",
        link: Link | None = None,
    ) -> CardOutcome:
        """The card's outcome for Kandev's resolution ``res``, made by ``by_user`` in Slack
        (None: outside Slack, or by someone unknown) with ``link``'s Kandev account (None:
        the bot's, or unknown). The account Kandev itself records (an approval's actor) is
        the one named when there is one: it cannot be wrong about whose token chose."""
        state = CardState.ANSWERED if res.status == "answered" else CardState.REJECTED
        outcome = CardOutcome(
            state=state,
            via="slack" if by_user else "kandev",
            by_user=by_user,
            answers=res.answers,
            reason=reason or res.reject_reason,
            at=at,
        )
        if res.actor_user_id and self.people is not None:
            credited = self.people.credit(outcome, res.actor_user_id)
            if credited is not outcome or link is None:
                return credited
        if link is None:
            return outcome
        return outcome.model_copy(
            update={"kandev_user": link.kandev_user_id, "kandev_name": link.display_name or ""}
        )

    def _resolve(self, card: Card, outcome: CardOutcome, *, force: bool = False) -> Card:
        """Move the card to ``outcome`` (once) and schedule its edit, in one transaction (a
        crash never leaves the card resolved with its message still live)."""
        with self.cards.atomic():
            updated = self._resolve_in_unit(card, outcome, force=force)
        self.publisher.wake()  # once committed: the publisher finds the edit
        return updated

    def _resolve_in_unit(self, card: Card, outcome: CardOutcome, *, force: bool) -> Card:
        changed = self.cards.transition(card.pending_id, outcome)
        if not changed and force:
            # Sync may have recorded the same resolution as "in Kandev" a moment earlier;
            # the winner is known to be this Slack user, so correct the attribution.
            current = self.cards.get(card.pending_id)
            if (
                current is not None
                and current.state == outcome.state
                and _less_attributed(current.outcome, outcome)
            ):
                changed = self.cards.transition(card.pending_id, outcome, expected=current.state)
                if changed:
                    updated = self.cards.get(card.pending_id) or card
                    self.publisher.enqueue_update(updated, reason="attribution")
                    return updated
        updated = self.cards.get(card.pending_id) or card
        if changed:
            self.publisher.enqueue_update(updated)
        return updated

    def _local_problem(self, card: Card, attempt: Attempt) -> Problem | None:
        """What Kandev would refuse, checked before sending (the kind's rule)."""
        invalid = spec_of(card).invalid(card, resolving.tried(attempt), MAX_TEXT)
        return None if invalid is None else Problem(length=invalid.length, found=invalid.found)

    def _duplicate(self, key: str, card: Card, attempt: Attempt) -> Verdict:
        """The same submission again: wait for the first to finish, then repeat a refusal
        worth repeating (Kandev's "invalid"), else say nothing new — unless Kandev has still
        not confirmed the first."""
        deadline = time.monotonic() + 5.0
        sub = self.submissions.get_submission(key)
        while sub is not None and not sub.finished and time.monotonic() < deadline:
            time.sleep(0.05)
            sub = self.submissions.get_submission(key)
        current = self.cards.get(card.pending_id) or card
        action = attempt.action
        if sub is not None and sub.finished and sub.verdict_message:
            problem = Problem.decode(sub.verdict_message)
            return Verdict("invalid", current, action=action, problem=problem)
        if sub is not None and not sub.finished:
            return Verdict("duplicate", current, action=action, checking=True)
        return Verdict("duplicate", current, action=action)

    def _audit(
        self, attempt: Attempt, verdict: Verdict, detail: str = "", *, kandev_user: str = ""
    ) -> None:
        metrics.answer(
            attempt.source, attempt.via, verdict.kind, item=label_of_key(attempt.pending_id)
        )
        log.info(
            "%s from %s (%s): %s", attempt.action, attempt.user_id, attempt.source, verdict.kind
        )
        self.audit_log.audit(
            attempt.pending_id,
            attempt.user_id,
            attempt.action,
            attempt.source,
            verdict.kind,
            detail,
            kandev_user=kandev_user or None,
        )


def _kandev_user(acting: Acting[KandevClient] | None) -> str:
    """The Kandev account an attempt is made with, when it is a person's own ("": the bot's)."""
    return acting.kandev_user_id if acting is not None else ""


def _less_attributed(current: CardOutcome | None, winner: CardOutcome) -> bool:
    """Whether a card's stored outcome says less than this Slack win does: nobody (sync
    recorded it "in Kandev" a moment earlier), or the same person but not as made in Slack
    (sync credited the Kandev account Kandev records, theirs, before their submission was
    finished) or without the Kandev account they answered with (sync credited them from their
    submission)."""
    if current is None or current.by_user is None:
        return True
    if current.by_user != winner.by_user:
        return False
    return current.via != winner.via or (not current.kandev_user and bool(winner.kandev_user))


def _describe(outcome: Outcome) -> str:
    match outcome:
        case reply.Lost(resolution=r, uncertain=True):
            return f"lost {r.status} (like this one, recorded {r.responded_at}: maybe its own)"
        case reply.Won(resolution=r) | reply.Lost(resolution=r):
            return f"{type(outcome).__name__.lower()} {r.status}"
        case reply.NotActive(message=m) | reply.Invalid(message=m) | reply.NotFound(message=m):
            return f"{type(outcome).__name__} {m}"
        case reply.NotRecorded(reason=r, retry_after=wait):
            after = f" (retry after {wait:g}s)" if wait is not None else ""
            return f"not recorded: {r}{after}"
        case reply.Unconfirmed(reason=r):
            return f"unconfirmed: {r}"
    return repr(outcome)
