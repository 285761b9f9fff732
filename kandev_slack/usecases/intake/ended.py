"""A card ended by what Kandev records (a question or an approval resolved or ended outside
this bot's own answer): the compare-and-set move, the audit and the card's edit, crediting
the Slack person whose answer won."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from kandev_slack.core.domain import Card, CardOutcome, CardState
from kandev_slack.store import Submission
from kandev_slack.usecases.audit import Audit


class EndedCards(Protocol):
    def atomic(self) -> AbstractContextManager[None]: ...

    def get(self, pending_id: str) -> Card | None: ...

    def transition(
        self, pending_id: str, to: CardOutcome, expected: CardState = CardState.PENDING
    ) -> bool: ...


class Winners(Protocol):
    def won_submission(self, pending_id: str) -> Submission | None: ...


class Edits(Protocol):
    def enqueue_update(self, card: Card, *, reason: str = "") -> None: ...

    def wake(self) -> None: ...


def credit_slack_winner(submissions: Winners, card: Card, outcome: CardOutcome) -> CardOutcome:
    """An answer (or choice) a Slack user won shows their name, even if sync notices it first.
    The Kandev account Kandev credits (an approval's actor) stays named when it is the one
    they linked; any other is not theirs to show (the answer pipeline names theirs)."""
    won = submissions.won_submission(card.pending_id)
    if won is None or outcome.state not in (CardState.ANSWERED, CardState.REJECTED):
        return outcome
    update: dict[str, object] = {"via": "slack", "by_user": won.user}
    if outcome.by_user != won.user:
        update |= {"kandev_user": "", "kandev_name": ""}
    if outcome.state is CardState.REJECTED and won.content.action == "reject":
        update["reason"] = won.content.reason
    return outcome.model_copy(update=update)


def end_synced(
    cards: EndedCards, audit_log: Audit, edits: Edits, card: Card, outcome: CardOutcome
) -> bool:
    """Move ``card`` from pending to ``outcome`` (once), audit it and queue its edit: one
    transaction, so a crash never leaves the card ended with its message still live."""
    with cards.atomic():
        if not cards.transition(card.pending_id, outcome):
            return False
        audit_log.audit(
            card.pending_id,
            outcome.by_user,
            outcome.state.value,
            "kandev",
            "synced",
            kandev_user=outcome.kandev_user or None,
        )
        updated = cards.get(card.pending_id)
        if updated is not None:
            edits.enqueue_update(updated)
    edits.wake()  # once committed: the publisher finds the edit
    return True
