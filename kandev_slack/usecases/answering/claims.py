"""USE-CASE: "I'm on it" — take a waiting card without answering it yet, take it over, release
it; and let a claim that ran out lapse (kandev_slack/core/claims.py has the timing).

A claim is changed by a compare-and-set on the card as it was read
(kandev_slack/store/cards/claims.py), with
the card's edits (its channel card and every other message of it) and any notice in its thread
enqueued in the same transaction. A person whose change lost the race to someone else's reads
the card again and tries once more on what it is now (a take over, or "already yours").

Each change is audited: ``claim`` (taken, taken over or renewed), ``release``, ``claim_lapsed``.
What the person is told is the edge's (kandev_slack/slack/presenters/tell.py words each result).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from kandev_slack.cards.parts.claims import lapsed_text, taken_over_text
from kandev_slack.core.claims import Claim, new_claim
from kandev_slack.core.domain import Card
from kandev_slack.core.outbox import (
    REPLY,
    UPDATE,
    UPDATE_COPY,
    copy_update_key,
    reply_key,
    update_key,
)
from kandev_slack.store import AuditRepository, CardsRepository, ClaimsRepository
from kandev_slack.store.cards.followups import OutboxRow
from kandev_slack.usecases.answering.admission import Admitted

log = logging.getLogger(__name__)

#: How many times a change that lost a race is tried again on the card as it is then.
_ATTEMPTS = 3


@dataclass(frozen=True)
class OnIt:
    """The person is on it now: newly, taking it over from ``took_from``, or again
    (``renewed``: they held it already; it now holds from now on)."""

    card: Card
    claim: Claim
    took_from: str | None = None
    renewed: bool = False


@dataclass(frozen=True)
class Released:
    card: Card


@dataclass(frozen=True)
class NotHolder:
    """Only the holder releases a claim (anyone who may answer can take it over instead)."""

    card: Card
    holder: Claim


@dataclass(frozen=True)
class NotClaimed:
    """Release of a card nobody is on (any more: it lapsed, or was released meanwhile)."""

    card: Card


@dataclass(frozen=True)
class Contended:
    """Others changed the claim each time this change was tried: nothing changed by it."""

    card: Card


@dataclass(frozen=True)
class Redelivered:
    """Slack's copy of a click whose change is made already (its first copy was answered):
    nothing changes, nothing more is said."""

    card: Card


ClaimResult = OnIt | Released | NotHolder | NotClaimed | Contended | Redelivered


@dataclass(eq=False)
class Claims:
    claims: ClaimsRepository
    copies: CardsRepository  # the card's other messages (its escalation and DM cards)
    audit_log: AuditRepository
    #: How long a claim on this card holds (its route's ``claim_for``).
    claim_for: Callable[[Card], float]
    #: The publisher's wake-up: the card edits are in the outbox.
    wake: Callable[[], None]

    def take(self, admitted: Admitted) -> ClaimResult:
        """ "I'm on it" / "Take over": the person holds the card from now for ``claim_for``."""
        user, card = admitted.request.user_id, admitted.card
        for _ in range(_ATTEMPTS):
            now = self.claims.claim_now()
            held = card.claim if card.claim is not None and card.claim.holds(now) else None
            if held is not None and held.user_id == user and admitted.request.redelivery:
                return Redelivered(card)  # Slack's copy of the click that made it theirs
            result = _taken(card, user, held, new_claim(user, now, self.claim_for(card)))
            notices = []
            if held is not None and result.took_from:
                key, text = f"over:{_version(result.claim)}", taken_over_text(held, user)
                notices.append(_notice(card, key, text))
            # Renewed, the same claim goes on (its start stays): nothing more is paused yet.
            paused = card.paused_s if result.renewed else _paused(card, now)
            edits = self._edits(card, result.claim, notices)
            if self.claims.set_claim(card, result.claim, paused, edits):
                self._audit(card, user, admitted, "claim", _claim_detail(result))
                self.wake()
                return result
            card = self.claims.claimed_card(card.pending_id) or card
            if card.state.terminal:
                break
        return Contended(card)

    def release(self, admitted: Admitted) -> ClaimResult:
        """ "Release": the holder gives the card back; its follow-ups resume."""
        user, card = admitted.request.user_id, admitted.card
        for _ in range(_ATTEMPTS):
            now = self.claims.claim_now()
            held = card.claim if card.claim is not None and card.claim.holds(now) else None
            if held is None:
                return Redelivered(card) if admitted.request.redelivery else NotClaimed(card)
            if held.user_id != user:
                return NotHolder(card, held)
            if self.claims.set_claim(card, None, _paused(card, now), self._edits(card, None, [])):
                self._audit(card, user, admitted, "release", "released")
                self.wake()
                return Released(card)
            card = self.claims.claimed_card(card.pending_id) or card
            if card.state.terminal:
                break
        return Contended(card)

    def next_lapse_s(self) -> float | None:
        """Seconds until the soonest claim runs out (None: nobody is on anything)."""
        return self.claims.next_lapse_s()

    def lapse_due(self) -> int:
        """Let every claim that ran out lapse (once across replicas): the card shows nobody on
        it, its follow-ups resume, and the holder is told in its thread. How many lapsed."""
        lapsed = 0
        for card in self.claims.lapsed_claims():
            claim = card.claim
            if claim is None:
                continue
            notice = _notice(card, f"lapsed:{_version(claim)}", lapsed_text(claim))
            paused = card.paused_s + claim.held_s(claim.until)
            if self.claims.set_claim(card, None, paused, self._edits(card, None, [notice])):
                log.info("the claim of %s on %s lapsed", claim.user_id, card.pending_id)
                self.audit_log.audit(
                    card.pending_id, claim.user_id, "claim_lapsed", "bot", "lapsed", ""
                )
                lapsed += 1
        if lapsed:
            self.wake()
        return lapsed

    # ---- internals -----------------------------------------------------------------------

    def _edits(self, card: Card, claim: Claim | None, notices: list[OutboxRow]) -> list[OutboxRow]:
        """The edits of every message of ``card`` to show ``claim`` (and the thread notices)."""
        reason = f"claim:{_version(claim)}" if claim is not None else f"free:{_version(card.claim)}"
        rows = [
            OutboxRow(
                UPDATE, update_key(card, reason), {"pending_id": card.pending_id}, card.channel
            )
        ]
        for copy in self.copies.messages_of(card.pending_id):
            rows.append(
                OutboxRow(
                    UPDATE_COPY,
                    copy_update_key(card, copy.key, reason),
                    {"pending_id": card.pending_id, "key": copy.key},
                    copy.channel or copy.target,
                )
            )
        return rows + notices

    def _audit(self, card: Card, user: str, admitted: Admitted, action: str, detail: str) -> None:
        try:
            self.audit_log.audit(
                card.pending_id, user, action, admitted.request.source, "ok", detail
            )
        except Exception:  # the change is made and shown; the audit line is what is lost
            log.exception("could not audit the %s of %s", action, card.pending_id)


def _taken(card: Card, user: str, held: Claim | None, claim: Claim) -> OnIt:
    """``user`` on ``card`` with ``claim``: new, taken over from ``held``, or renewed (then
    from the start it had: renewing is going on with it)."""
    if held is None:
        return OnIt(card, claim)
    if held.user_id != user:
        return OnIt(card, claim, took_from=held.user_id)
    return OnIt(card, claim.model_copy(update={"since": held.since}), renewed=True)


def _paused(card: Card, now: datetime) -> float:
    """The card's paused time once the claim it has (if any) ends ``now``."""
    return card.paused_s + (card.claim.held_s(now) if card.claim is not None else 0.0)


def _version(claim: Claim | None) -> str:
    """One claim's identity in outbox keys: its holder and start (ms)."""
    if claim is None:
        return "none"
    return f"{claim.user_id}:{int(claim.since.timestamp() * 1000)}"


def _notice(card: Card, key: str, text: str) -> OutboxRow:
    """A notice in the thread of ``card``'s channel card (once per ``key``)."""
    key = f"claim:{card.pending_id}:{key}"
    return OutboxRow(
        REPLY,
        reply_key(key),
        {"pending_id": card.pending_id, "key": key, "text": text},
        card.channel,
    )


def _claim_detail(result: OnIt) -> str:
    if result.took_from:
        return f"took over from {result.took_from}"
    return "renewed" if result.renewed else "taken"
