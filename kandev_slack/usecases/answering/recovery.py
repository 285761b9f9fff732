"""Crash recovery for answers: submissions left unfinished by a process that died.

A submission is recorded (``begin_submission``) before the bot calls Kandev and finished once
Kandev's answer is applied. If the process dies in between, nobody knows whether Kandev got
the answer. Kandev does: re-sending the very same answer is safe (the retry either wins, or
reports the winner, which may be the first attempt). So each cycle, the recovery takes over
(compare-and-set, one replica wins) every submission whose lease went stale (see leases.py),
re-sends it, recognises its own earlier attempt in a "lost" reply, applies the outcome to the
card exactly as a live submission would, and tells the person who clicked.

A re-send that settles nothing (Kandev unreachable, or no usable reply) leaves the submission
for a later cycle, each time waiting twice as long (counted durably in ``resends``). After
``MAX_RESENDS`` re-sends the recovery gives up visibly: it reads what Kandev recorded (nothing
is sent), applies that when it tells, else drops the submission so the card can be answered
again; either way the person is told, and it is audited and logged.

A submission sent with a person's own Kandev account (kandev_slack/usecases/identity.py) is
re-sent with it, never with the bot's. When their account can no longer send it — their link
is gone or broken (Kandev refuses the token: their link is marked broken), their role there may
not answer, or their account does not see the item (Kandev's "not found" while the bot's own
read says it still waits) — nothing is re-sent: what Kandev recorded is applied when it tells
(the first attempt may have been recorded), else the submission is dropped and they are told
why at once (not after every re-send was spent on it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol

from kandev_slack.core.domain import Card
from kandev_slack.core.timing.settled import SETTLED_LOOK_S
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevAuthError, KandevUnavailable
from kandev_slack.kandev.models import NotRecorded, Outcome, Unconfirmed
from kandev_slack.kinds.registry import label_of_key
from kandev_slack.ops import metrics
from kandev_slack.ops.logs import log_context
from kandev_slack.store import AuditRepository, CardsRepository, Submission, SubmissionsRepository
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering import resolving
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.verdicts import Attempt, Verdict, VerdictKind, repeat_of
from kandev_slack.usecases.followups.periodic import PeriodicLoop
from kandev_slack.usecases.identity import Acting, IdentityProblem
from kandev_slack.usecases.leases import SUBMISSION_LEASE_S, InFlight

log = logging.getLogger(__name__)

SOURCE = "recovery"
#: Re-sends of one submission before the recovery gives up on it.
MAX_RESENDS = 5

#: Why a person's own account cannot re-send what it first sent, as the verdict they are told
#: ("unreachable" is not among them: Kandev could not be asked, a later cycle tries again).
NOT_THEIRS_NOW: dict[IdentityProblem, VerdictKind] = {
    "connect": "connect",
    "reconnect": "relink",
    "viewer": "viewer",
    "not_visible": "not_visible",
}


class _Refused(Exception):
    """The person's own token was refused while re-sending (their link is now broken)."""


@dataclass
class RecoveryReport:
    recovered: list[tuple[str, str]] = field(default_factory=list)  # (pending_id, verdict kind)
    deferred: list[str] = field(default_factory=list)  # not settled yet: a later cycle
    unfinished: int = 0  # stale unfinished submissions seen (ours in flight, backing off…)


class Announcer(Protocol):
    """Tells the person who clicked how a recovered submission ended: in ``channel`` (None:
    not told there) and in the modal ``view_id`` left on "Sending…" (empty: none)."""

    def recovered(self, user: str, channel: str | None, view_id: str, verdict: Verdict) -> None: ...


@dataclass(eq=False)
class Recovery(PeriodicLoop):
    kandev: KandevClient
    cards: CardsRepository
    submissions: SubmissionsRepository
    audit_log: AuditRepository
    answers: AnswerService
    answerers: Answerers
    announce: Announcer
    in_flight: InFlight
    _: KW_ONLY
    interval_s: float = 5.0
    stale_after_s: float = SUBMISSION_LEASE_S
    #: The store's count of this process's changing writes (see PeriodicLoop.changes).
    changes: Callable[[], int] | None = None
    settled_s: float = SETTLED_LOOK_S

    def work_once(self) -> int:
        """One round of the worker (:class:`PeriodicLoop`, started right after a restart,
        then every ``interval_s``): how much it found. While it finds nothing and nothing
        changes in the store here, it looks again every ``settled_s`` only (another replica's
        submission goes stale without a change here: its process died)."""
        report = self.run_once()
        return len(report.recovered) + len(report.deferred) + report.unfinished

    def round_done(self) -> None:
        """Recovery has no /healthz component of its own: Kandev's and the store's tell."""

    def round_failed(self, exc: Exception) -> None:
        if isinstance(exc, (KandevUnavailable, KandevAuthError)):
            log.warning("recovery waits for Kandev: %s", exc)
        else:
            log.error("recovery cycle failed; will retry", exc_info=exc)

    def run_once(self) -> RecoveryReport:
        """Reconcile every stale unfinished submission; raises KandevUnavailable / auth errors
        (after giving the submission back to the next cycle) like the sync cycle does."""
        report = RecoveryReport()
        for sub in self.submissions.unfinished_submissions(older_than_s=self.stale_after_s):
            report.unfinished += 1
            if sub.submission_key in self.in_flight:
                continue  # ours and alive (the heartbeat may just not have run yet)
            if not self.submissions.take_over_submission(
                sub.submission_key, self._backoff(sub.resends)
            ):
                continue  # another replica took it over first, or it waits out its backoff
            try:
                with log_context(pending_id=sub.pending_id, user=sub.user):
                    verdict = self._reconcile(sub, sub.resends + 1)
            except (KandevUnavailable, KandevAuthError):
                report.deferred.append(sub.pending_id)
                raise
            except Exception:  # one bad submission must not stop the sync cycle for good
                log.exception("could not recover the submission for %s; will retry", sub.pending_id)
                report.deferred.append(sub.pending_id)
                continue
            if verdict is not None:
                report.recovered.append((sub.pending_id, verdict.kind))
                continue
            left = self.submissions.get_submission(sub.submission_key)
            if left is not None and not left.finished:
                report.deferred.append(sub.pending_id)  # settled nothing: a later cycle
        return report

    def _backoff(self, resends: int) -> float:
        """How old a submission's lease must be before its next re-send: the lease, doubled
        after each re-send that settled nothing."""
        return float(self.stale_after_s * 2 ** max(resends - 1, 0))

    def _reconcile(self, sub: Submission, resends: int) -> Verdict | None:
        attempt = Attempt.of(sub, source=SOURCE)
        key = sub.submission_key
        card = self.cards.get(sub.pending_id)
        if card is None:
            log.warning("dropping submission %s: its card is unknown", key[:12])
            self.submissions.finish_submission(key, "unknown_bundle")
            return None
        channel = card.channel if card.ts else None
        # The re-send acts for the person who clicked: they must still be allowed to answer
        # (a user group that cannot be resolved now raises, and the submission waits).
        if not self.answerers.may_answer_card(card, sub.user, strict=True):
            log.warning("not re-sending %s: %s may not answer it", key[:12], sub.user)
            if not self.submissions.finish_submission(key, "forbidden"):
                return None
            self.audit_log.audit(
                sub.pending_id, sub.user, attempt.action, SOURCE, "forbidden", "not re-sent"
            )
            verdict = Verdict("forbidden", card, action=attempt.action)
            self.announce.recovered(sub.user, channel, attempt.view_id, verdict)
            return verdict
        log.info(
            "recovering the %s of %s by %s (re-send %d of %d)",
            attempt.action,
            sub.pending_id,
            sub.user,
            resends,
            MAX_RESENDS,
        )
        acting = self._acting(card, attempt, sub)
        if isinstance(acting, str) and acting != "unreachable":
            return self._not_theirs_now(sub, attempt, channel, acting)
        try:
            with self.in_flight.hold(key):
                # The fence right before the re-send: still this recovery's take-over.
                if not self.submissions.hold_submission(key, resends, SUBMISSION_LEASE_S):
                    log.warning("not re-sending %s: taken over meanwhile", key[:12])
                    return None
                outcome = self._send(card, attempt, sub, acting)
        except _Refused:
            return self._not_theirs_now(sub, attempt, channel, "reconnect")
        except (KandevUnavailable, KandevAuthError) as exc:
            if resends < MAX_RESENDS:
                raise
            return self._give_up(sub, attempt, channel, resends, str(exc))
        if isinstance(outcome, Unconfirmed | NotRecorded):
            # A re-send that was not recorded says nothing about the first attempt.
            if resends < MAX_RESENDS:
                log.warning("re-send %d of %s settled nothing: %s", resends, key[:12], outcome)
                return None
            return self._give_up(sub, attempt, channel, resends, _describe(outcome))
        if isinstance(acting, Acting):
            # A person's "not found": the bot's own read decides (hidden from them only?).
            seen = self.answers.as_the_bot_sees(acting, card, attempt, outcome, sub.created_at)
            if seen is None:
                return self._not_theirs_now(sub, attempt, channel, "not_visible")
            outcome = seen
        verdict = self.answers.apply_outcome(attempt, outcome, key)
        return self._finish(sub, attempt, channel, verdict, _describe(outcome))

    def _finish(
        self, sub: Submission, attempt: Attempt, channel: str | None, verdict: Verdict, detail: str
    ) -> Verdict | None:
        key = sub.submission_key
        if not self.submissions.finish_submission(key, verdict.kind, repeat_of(verdict)):
            return None  # finished meanwhile by someone else; they told the person
        self.audit_log.audit(
            sub.pending_id,
            sub.user,
            attempt.action,
            SOURCE,
            verdict.kind,
            detail,
            kandev_user=self._kandev_user(sub),
        )
        metrics.answer(SOURCE, "", verdict.kind, item=label_of_key(sub.pending_id))
        self.announce.recovered(sub.user, channel, attempt.view_id, verdict)
        return verdict

    def _give_up(
        self, sub: Submission, attempt: Attempt, channel: str | None, resends: int, why: str
    ) -> Verdict | None:
        """Stop re-sending: apply what Kandev's record shows, else drop the submission (the
        card can be answered again) and tell the person that the bot could not find out."""
        detail = f"gave up after {resends} re-sends ({why})"
        log.error("recovery gives up on the %s of %s: %s", attempt.action, sub.pending_id, detail)
        return self._settle(sub, attempt, channel, detail, None)

    def _settle(
        self,
        sub: Submission,
        attempt: Attempt,
        channel: str | None,
        detail: str,
        kind: VerdictKind | None,
    ) -> Verdict | None:
        """Stop here, sending nothing: apply what Kandev's record shows when it tells, else
        drop the submission (the card can be answered again), audit it and tell the person
        ``kind`` (None: gave up; not recorded or unconfirmed, as Kandev's record reads)."""
        key = sub.submission_key
        outcome = self.answers.read_back(attempt, sub.created_at)
        if outcome is not None and not isinstance(outcome, NotRecorded | Unconfirmed):
            verdict = self.answers.apply_outcome(attempt, outcome, key)
            return self._finish(sub, attempt, channel, verdict, f"{detail}; Kandev shows it")
        gave_up = kind is None
        if kind is None:
            kind = "not_recorded" if isinstance(outcome, NotRecorded) else "unconfirmed"
        if not self.submissions.drop_submission(key):
            return None  # finished meanwhile by someone else; they told the person
        self.audit_log.audit(
            sub.pending_id,
            sub.user,
            attempt.action,
            SOURCE,
            kind,
            detail,
            kandev_user=self._kandev_user(sub),
        )
        metrics.answer(SOURCE, "", kind, item=label_of_key(sub.pending_id))
        card = self.cards.get(sub.pending_id)
        verdict = Verdict(kind, card, action=attempt.action, gave_up=gave_up)
        self.announce.recovered(sub.user, channel, attempt.view_id, verdict)
        return verdict

    def _kandev_user(self, sub: Submission) -> str | None:
        """The Kandev account a re-send is made with, when it is the person's own."""
        card = self.cards.get(sub.pending_id)
        link = self.answers.identities.linked(sub.user, card.task) if card is not None else None
        return link.kandev_user_id if link is not None else None

    def _acting(
        self, card: Card, attempt: Attempt, sub: Submission
    ) -> Acting[Any] | IdentityProblem:
        """Whose account re-sends it: whoever it was first sent as (see the module's doc).
        One first sent with a person's own account is never re-sent with the bot's."""
        acting = self.answers.identities.acting(sub.user, card, attempt.action)
        if isinstance(acting, Acting) and attempt.kandev_user and acting.link is None:
            return "connect"  # sent as them; they have no linked account now
        return acting

    def _send(
        self,
        card: Card,
        attempt: Attempt,
        sub: Submission,
        acting: Acting[Any] | IdentityProblem,
    ) -> Outcome:
        # The first attempt may have reached Kandev: the client counts a "lost" to exactly
        # what we send, recorded after the submission was (so first sent), as that attempt
        # winning; recorded before, as someone else's; undecidable, as uncertain.
        if isinstance(acting, str):
            return NotRecorded(f"identity:{acting}")  # Kandev could not be asked: later
        try:
            return resolving.send(
                acting.kandev, card, attempt, first_sent=sub.created_at, resend=True
            )
        except KandevAuthError:
            if acting.link is None:
                raise
            self.answers.identities.refused_token(acting)
            raise _Refused() from None

    def _not_theirs_now(
        self, sub: Submission, attempt: Attempt, channel: str | None, problem: IdentityProblem
    ) -> Verdict | None:
        """Their own account cannot re-send it (``problem``): nothing is sent. What Kandev
        recorded is applied when it tells (the first attempt may have been), else the
        submission is dropped (the card can be answered again) and they are told why."""
        key = sub.submission_key
        kind = NOT_THEIRS_NOW[problem]
        detail = f"not re-sent: their account cannot send it ({problem})"
        log.warning("not re-sending %s: their own Kandev account %s", key[:12], problem)
        return self._settle(sub, attempt, channel, detail, kind)


def _describe(outcome: Outcome) -> str:
    match outcome:
        case NotRecorded(reason=r) | Unconfirmed(reason=r):
            return f"{type(outcome).__name__.lower()}: {r} (re-sent after a restart)"
    return f"{type(outcome).__name__.lower()} (re-sent after a restart)"
