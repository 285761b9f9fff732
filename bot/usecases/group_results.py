"""How each member of a Send to all ended (bot/usecases/groups.py), from the one pipeline's
result for it, and the summary the person is told (its words: bot/cards/groups.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.core.clarification import Answer
from bot.core.domain import Card, CardOutcome, CardState, PastChoice
from bot.usecases.admission import Refusal
from bot.usecases.verdicts import Verdict

MemberKind = Literal["sent", "meanwhile", "yours", "forbidden", "no_option", "ended", "not_sent"]


@dataclass(frozen=True)
class MemberResult:
    """How one member ended: sent, answered meanwhile by ``by_user`` (None: in Kandev), this
    person's already (a double click, a redelivery), not theirs to answer, without the
    option, no longer waiting, or not sent (busy, Kandev unreachable…)."""

    card: Card
    kind: MemberKind
    by_user: str | None = None
    label: str = ""


@dataclass(frozen=True)
class Summary:
    choice: PastChoice
    results: tuple[MemberResult, ...] = field(default=())

    def of(self, kind: MemberKind) -> tuple[MemberResult, ...]:
        return tuple(r for r in self.results if r.kind == kind)

    @property
    def anything_new(self) -> bool:
        """False when every member was this person's already: a double click or Slack's copy
        of the click, whose first copy is being (or was) told."""
        return any(r.kind != "yours" for r in self.results)


def member_result(
    card: Card, result: object, user_id: str = "", answers: Sequence[Answer] = ()
) -> MemberResult:
    """How ``user_id``'s request (of ``answers``) on one member ended, from its pipeline
    result (a refusal or a verdict). The same answer already on it by this person — the other
    copy of a double click sent it (on this replica or another), or it is being sent — is
    sent; another answer of theirs is theirs already."""
    refusal = getattr(result, "refusal", None)
    if isinstance(refusal, Refusal):
        if refusal.kind in ("already_answered", "redelivered"):
            return _theirs(card, refusal.outcome, answers)
        return _refused(card, refusal)
    if isinstance(result, Verdict):
        if result.kind == "duplicate":
            return _duplicate(card, result.card, user_id)
        if result.kind == "already_answered":
            return _theirs(card, result.outcome, answers)
        return _verdict(card, result)
    return MemberResult(card, "not_sent")  # busy, or the bot's database unavailable


def _theirs(card: Card, outcome: CardOutcome | None, answers: Sequence[Answer]) -> MemberResult:
    """Answered by this person already: with this very answer (sent), or another (theirs)."""
    same = outcome is not None and bool(answers) and _same(outcome.answers, answers)
    return MemberResult(card, "sent" if same else "yours")


def _same(given: Sequence[Answer], sent: Sequence[Answer]) -> bool:
    def key(answers: Sequence[Answer]) -> list[tuple[str, tuple[str, ...], str]]:
        return sorted(
            (a.question_id, tuple(sorted(a.selected_options)), a.custom_text.strip())
            for a in answers
        )

    return key(given) == key(sent)


def _duplicate(card: Card, current: Card | None, user_id: str) -> MemberResult:
    if current is None or current.state is CardState.PENDING:
        return MemberResult(card, "sent")  # on its way to Kandev (the other copy sends it)
    outcome = current.outcome
    if outcome is not None and outcome.by_user == user_id and outcome.via == "slack":
        return MemberResult(card, "sent")
    return _resolved(card, outcome)


def _refused(card: Card, refusal: Refusal) -> MemberResult:
    match refusal.kind:
        case "forbidden":
            return MemberResult(card, "forbidden")
        case "resolved_already":
            return _resolved(card, refusal.outcome)
    return MemberResult(card, "not_sent")


def _verdict(card: Card, verdict: Verdict) -> MemberResult:
    match verdict.kind:
        case "won":
            return MemberResult(card, "sent")
        case "lost" | "undecided":
            return _resolved(card, verdict.outcome)
        case "ended" | "unavailable":
            return MemberResult(card, "ended")
    return MemberResult(card, "not_sent")


def _resolved(card: Card, outcome: CardOutcome | None) -> MemberResult:
    if outcome is not None and outcome.state in (CardState.ENDED, CardState.UNAVAILABLE):
        return MemberResult(card, "ended")
    by_user = outcome.by_user if outcome is not None and outcome.via == "slack" else None
    return MemberResult(card, "meanwhile", by_user=by_user)
