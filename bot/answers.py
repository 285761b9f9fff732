"""Slack -> Kandev: the one use-case that resolves a bundle on behalf of a Slack user.

It checks what can be checked locally (the card, its channel, who may answer), records the
submission durably (so a redelivered interaction never reaches Kandev twice), calls Kandev,
and applies the outcome table of design.md: the card shows the winner, the clicker is told.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from bot import messages
from bot.domain import Card, CardOutcome, CardState
from bot.kandev.client import KandevClient
from bot.kandev.errors import KandevAuthError, KandevUnavailable
from bot.kandev.models import Answer, Invalid, Lost, NotActive, NotFound, Outcome, Resolution, Won
from bot.leases import InFlight
from bot.publisher import Publisher
from bot.routing import Routing
from bot.store import Store, Submission

log = logging.getLogger(__name__)

#: A submission leased longer ago than this is no longer "in flight" (its process died).
SUBMISSION_LEASE_S = 30.0
#: How long a losing submission waits for a concurrent Slack submission of the same bundle to
#: finish, so that the loser (and the card) can name the Slack user who won.
WINNER_WAIT_S = 3.0

VerdictKind = Literal[
    "won",
    "lost",
    "already_answered",
    "ended",
    "invalid",
    "unavailable",
    "not_recorded",
    "forbidden",
    "resolved_already",
    "wrong_channel",
    "unknown_bundle",
    "duplicate",
]


@dataclass(frozen=True)
class Attempt:
    """One person's attempt to answer or reject a bundle from Slack."""

    pending_id: str
    user_id: str
    action: Literal["answer", "reject"]
    source: str  # button | modal | shortcut | list | home
    answers: tuple[Answer, ...] = ()
    reason: str = ""
    channel: str | None = None  # the channel the interaction happened in, when on a card

    def key(self) -> str:
        """Identifies this submission: the same person sending the same thing twice."""
        body = {
            "p": self.pending_id,
            "u": self.user_id,
            "a": self.action,
            "answers": sorted(
                (a.question_id, sorted(a.selected_options), a.custom_text.strip())
                for a in self.answers
            ),
            "r": self.reason.strip(),
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """What happened, and what to tell the person (``message`` empty: the card says it all)."""

    kind: VerdictKind
    message: str = ""
    card: Card | None = field(default=None, compare=False)


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
    duplicate: bool = False
    lease: ExitStack = field(default_factory=ExitStack, repr=False, compare=False)

    def release(self) -> None:
        """Stop renewing the lease (idempotent)."""
        self.lease.close()


def won_submission(store: Store, pending_id: str) -> Submission | None:
    """The Slack submission that won this bundle in Kandev, if one did."""
    for sub in store.submissions_for(pending_id):
        if sub.result_json and json.loads(sub.result_json).get("kind") == "won":
            return sub
    return None


def submission_in_flight(
    store: Store, pending_id: str, within_s: float = SUBMISSION_LEASE_S, *, besides: str = ""
) -> bool:
    """A Slack submission for this bundle (other than ``besides``, a submission key) is on its
    way to Kandev right now: unfinished, and its lease renewed within ``within_s``."""
    return store.submission_in_flight(pending_id, within_s, besides)


def submission_reason(sub: Submission) -> str:
    return str(json.loads(sub.payload_json).get("reason") or "")


class AnswerService:
    def __init__(
        self,
        kandev: KandevClient,
        store: Store,
        routing: Routing,
        publisher: Publisher,
        group_members: Callable[[str], frozenset[str]],
        *,
        find_bundle: Callable[[str], Card | None] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        in_flight: InFlight | None = None,
    ):
        self.kandev = kandev
        self.store = store
        self.routing = routing
        self.publisher = publisher
        self.group_members = group_members
        self.find_bundle = find_bundle
        self.clock = clock
        #: Submissions this process is sending (their leases are renewed; see leases.py).
        self.in_flight = in_flight or InFlight()

    # ---- checks usable before opening a modal ---------------------------------------------

    def card(self, pending_id: str) -> Card | None:
        card = self.store.get(pending_id)
        if card is None and self.find_bundle is not None:
            card = self.find_bundle(pending_id)
        return card

    def may_act(self, card: Card, user_id: str, *, strict: bool = False) -> bool:
        """Whether the route lets this user answer. A failure to resolve a user group counts as
        "not a member", unless ``strict``: then it raises (the caller retries later)."""
        route = self.routing.route_for(card.workspace_id, card.task.workspace_name)
        if route is None:
            return False  # no route at all: nobody is configured to answer this workspace
        if not route.answerers or user_id in route.answerers:
            return True
        if strict:
            groups = {g for g in route.user_group_ids if user_id in self.group_members(g)}
        else:
            groups = {g for g in route.user_group_ids if self._in_group(g, user_id)}
        return route.may_answer(user_id, groups)

    def precheck(
        self, card: Card | None, user_id: str, channel: str | None, *, action: str = "answer"
    ) -> Verdict | None:
        """Why this user cannot act on this card now (None: go ahead)."""
        if card is None:
            return Verdict("unknown_bundle", messages.unknown_bundle_message())
        if channel is not None and card.ts and channel != card.channel:
            return Verdict("wrong_channel", messages.wrong_channel_message(card.channel), card)
        if card.state.terminal and card.outcome is not None:
            if card.outcome.by_user == user_id:
                return Verdict(
                    "already_answered", messages.already_answered_message(card.bundle, card.outcome)
                )
            return Verdict(
                "resolved_already",
                messages.resolved_already_message(
                    card.bundle, card.outcome, action="reject" if action == "reject" else "answer"
                ),
                card,
            )
        if not self.may_act(card, user_id):
            return Verdict("forbidden", messages.forbidden_message(), card)
        return None

    # ---- the use-case --------------------------------------------------------------------

    def submit(self, attempt: Attempt) -> Verdict:
        """Check, record, send and apply one attempt (:meth:`begin` then :meth:`complete`)."""
        begun = self.begin(attempt)
        return begun if isinstance(begun, Verdict) else self.complete(begun)

    def begin(self, attempt: Attempt) -> Verdict | Begun:
        """Everything before Kandev: the card, the precheck, local validation, and the durable
        record of the submission. A Verdict is a refusal (audited); a Begun must be passed to
        :meth:`complete`. Never waits for another submission (a duplicate returns at once)."""
        card = self.card(attempt.pending_id)
        refusal = self.precheck(card, attempt.user_id, attempt.channel, action=attempt.action)
        if refusal is not None:
            self._audit(attempt, refusal)
            return refusal
        assert card is not None
        problem = self._local_problem(card, attempt)
        if problem:
            verdict = Verdict("invalid", problem, card)
            self._audit(attempt, verdict)
            return verdict

        key = attempt.key()
        payload = {
            "action": attempt.action,
            "answers": [a.model_dump() for a in attempt.answers],
            "reason": attempt.reason,
        }
        if not self.store.begin_submission(
            attempt.pending_id, key, attempt.user_id, json.dumps(payload)
        ):
            return Begun(attempt, card, key, duplicate=True)
        begun = Begun(attempt, card, key)
        begun.lease.enter_context(self.in_flight.hold(key))
        return begun

    def complete(self, begun: Begun) -> Verdict:
        """Send a begun submission to Kandev, apply the outcome, finish it and audit it."""
        attempt, card, key = begun.attempt, begun.card, begun.key
        if begun.duplicate:
            verdict = self._duplicate(key, card)
            self._audit(attempt, verdict)
            return verdict
        try:
            try:
                outcome = self._call_kandev(attempt)
            except (KandevUnavailable, KandevAuthError) as exc:
                log.warning("answer for %s not recorded: %s", attempt.pending_id, exc)
                self.store.drop_submission(key)  # nothing reached Kandev: a retry must be possible
                verdict = Verdict(
                    "not_recorded", messages.not_recorded_message(action=attempt.action), card
                )
                self._audit(attempt, verdict, str(exc))
                return verdict

            verdict = self._apply(card, attempt, outcome, key)
            self.store.finish_submission(key, json.dumps({"kind": verdict.kind}))
        finally:
            begun.release()
        self._audit(attempt, verdict, _describe(outcome))
        return verdict

    # ---- internals -----------------------------------------------------------------------

    def apply_outcome(self, attempt: Attempt, outcome: Outcome, key: str) -> Verdict:
        """Apply Kandev's reply to a submission sent outside :meth:`submit` (crash recovery
        re-sends unfinished ones) to its card, as :meth:`submit` would."""
        card = self.card(attempt.pending_id)
        if card is None:
            return Verdict("unknown_bundle", messages.unknown_bundle_message())
        return self._apply(card, attempt, outcome, key)

    def _call_kandev(self, attempt: Attempt) -> Outcome:
        if attempt.action == "reject":
            return self.kandev.reject(attempt.pending_id, attempt.reason)
        return self.kandev.answer(attempt.pending_id, list(attempt.answers))

    def _apply(self, card: Card, attempt: Attempt, outcome: Outcome, key: str) -> Verdict:
        now = self.clock()
        match outcome:
            case Won(resolution=res):
                result = self._outcome(res, now, by_user=attempt.user_id, reason=attempt.reason)
                return Verdict("won", "", self._resolve(card, result, force=True))
            case Lost(resolution=res):
                earlier = self._slack_winner(card.pending_id, key)
                if earlier is not None and earlier.user == attempt.user_id:
                    result = self._outcome(res, now, by_user=attempt.user_id)
                    updated = self._resolve(card, result)
                    return Verdict(
                        "already_answered",
                        messages.already_answered_message(card.bundle, result),
                        updated,
                    )
                winner = earlier.user if earlier is not None else None
                result = self._outcome(res, now, by_user=winner)
                updated = self._resolve(card, result)
                message = messages.lost_message(card.bundle, result, action=attempt.action)
                return Verdict("lost", message, updated)
            case NotActive():
                result = CardOutcome(state=CardState.ENDED, via="kandev", at=now)
                return Verdict("ended", messages.ended_message(), self._resolve(card, result))
            case NotFound():
                result = CardOutcome(state=CardState.UNAVAILABLE, via="kandev", at=now)
                return Verdict(
                    "unavailable", messages.unavailable_message(), self._resolve(card, result)
                )
            case Invalid(message=msg):
                return Verdict("invalid", messages.invalid_message(msg), card)
        raise AssertionError(f"unexpected outcome {outcome!r}")

    def _slack_winner(self, pending_id: str, own_key: str) -> Submission | None:
        """The Slack submission that won, waiting briefly while a concurrent one (the likely
        winner of a race between two Slack users) is still on its way back from Kandev."""
        deadline = time.monotonic() + WINNER_WAIT_S
        while True:
            won = won_submission(self.store, pending_id)
            if won is not None or time.monotonic() >= deadline:
                return won
            if not submission_in_flight(self.store, pending_id, besides=own_key):
                return won_submission(self.store, pending_id)
            time.sleep(0.05)

    @staticmethod
    def _outcome(
        res: Resolution, at: datetime, *, by_user: str | None, reason: str = ""
    ) -> CardOutcome:
        state = CardState.ANSWERED if res.status == "answered" else CardState.REJECTED
        return CardOutcome(
            state=state,
            via="slack" if by_user else "kandev",
            by_user=by_user,
            answers=res.answers,
            reason=reason or res.reject_reason,
            at=at,
        )

    def _resolve(self, card: Card, outcome: CardOutcome, *, force: bool = False) -> Card:
        """Move the card to ``outcome`` (once) and schedule its edit."""
        changed = self.store.transition(card.pending_id, outcome)
        if not changed and force:
            # Sync may have recorded the same resolution as "in Kandev" a moment earlier;
            # the winner is known to be this Slack user, so correct the attribution.
            current = self.store.get(card.pending_id)
            if (
                current is not None
                and current.state == outcome.state
                and (current.outcome is None or current.outcome.by_user is None)
            ):
                changed = self.store.transition(card.pending_id, outcome, expected=current.state)
                if changed:
                    self.store.outbox_put(
                        "update",
                        f"update:{card.pending_id}:{outcome.state.value}:attribution",
                        {"pending_id": card.pending_id},
                        channel=card.channel,
                    )
                    self.publisher.wake()
                    return self.store.get(card.pending_id) or card
        updated = self.store.get(card.pending_id) or card
        if changed:
            self.publisher.enqueue_update(updated)
        return updated

    def _local_problem(self, card: Card, attempt: Attempt) -> str:
        """What Kandev would refuse, checked before sending (messages for an ephemeral)."""
        if attempt.action == "reject":
            if len(attempt.reason.strip()) > messages.MAX_TEXT:
                return messages.too_long_message(len(attempt.reason.strip()))
            return ""
        by_question = {a.question_id: a for a in attempt.answers}
        if set(by_question) != {q.question_id for q in card.bundle.questions}:
            return messages.invalid_message("every question needs an answer")
        for question in card.bundle.questions:
            answer = by_question[question.question_id]
            if any(question.option(o) is None for o in answer.selected_options):
                return messages.invalid_message("that option is not part of this question")
            text = answer.custom_text.strip()
            if len(text) > messages.MAX_TEXT:
                return messages.too_long_message(len(text))
            if not answer.selected_options and not text:
                return messages.invalid_message("every question needs an answer")
        return ""

    def _duplicate(self, key: str, card: Card) -> Verdict:
        """The same submission again: wait for the first to finish, then say nothing new."""
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            sub = self.store.get_submission(key)
            if sub is None or sub.finished:
                break
            time.sleep(0.05)
        return Verdict("duplicate", "", self.store.get(card.pending_id) or card)

    def _in_group(self, group_id: str, user_id: str) -> bool:
        try:
            return user_id in self.group_members(group_id)
        except Exception:  # a Slack failure must not grant access
            log.warning("members of %s unavailable; treating %s as not a member", group_id, user_id)
            return False

    def _audit(self, attempt: Attempt, verdict: Verdict, detail: str = "") -> None:
        self.store.audit(
            attempt.pending_id,
            attempt.user_id,
            attempt.action,
            f"slack:{attempt.source}",
            verdict.kind,
            detail,
        )


def _describe(outcome: Outcome) -> str:
    match outcome:
        case Won(resolution=r) | Lost(resolution=r):
            return f"{type(outcome).__name__.lower()} {r.status}"
        case NotActive(message=m) | Invalid(message=m) | NotFound(message=m):
            return f"{type(outcome).__name__} {m}"
    return repr(outcome)
