"""USE-CASE: answer every identical question at once (issue 22, point 5; issue 33).

A card's *group* (the identical items waiting in its channel: on its own channel card or in
its thread) is kandev_slack/usecases/groups.py's :class:`GroupLines`, shared with the outbox.
Send to all is offered for one-question question cards (an answer maps onto each member by
its option's label); the members of another kind are answered each on its own card.

After a person's answer wins on a grouped card, they are offered (:meth:`Groups.offer`) to send
the same choice to the others. **Send** (:meth:`Groups.send_all`) re-reads the card (its
answer must be this person's win), re-reads exactly the members the offer named (its button
carries them; one that joined the group since is never answered unasked; those resolved since
are reported as answered meanwhile) and maps the answer onto
each member by its option's normalised label (free text as it is; a member without that option
is reported, never guessed). Each mapped member is then one request through the one admission
step and answer pipeline (kandev_slack/usecases/answering/interactions.py), as a button click:
permission is
checked per bundle, each is sent to Kandev on its own (its own winner), its card edited to its
own outcome, and a redelivered or double-clicked Send sends nothing twice (the submission of
the same answer by the same person is recorded once). Audited per bundle with source
:data:`SOURCE`.

The use-case returns kinds; the words are the edge's (kandev_slack/cards/parts/groups.py,
kandev_slack/slack/presenters/tell.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from kandev_slack.core.clarification import Answer, Question
from kandev_slack.core.domain import Card, CardOutcome, CardState, PastChoice
from kandev_slack.core.normalise import normalise
from kandev_slack.usecases.answering.admission import Refusal, Request
from kandev_slack.usecases.answering.verdicts import Verdict
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.groups import (
    MAX_GROUP,
    GroupCards,
    GroupLines,
    group_key,
    one_question,
)
from kandev_slack.usecases.past_answers import past_choices

log = logging.getLogger(__name__)

#: The audit's and the metrics' source of an answer sent by "Send to all".
SOURCE = "answer_all"


@dataclass(frozen=True)
class NoSuchOption:
    """The member has no option of that (normalised) label: nothing is sent to it."""

    label: str


def map_answer(source: Question, answer: Answer, member: Question) -> Answer | NoSuchOption:
    """``answer`` (to ``source``) as the same answer to ``member``: each chosen option by its
    normalised label, the free text as it is."""
    chosen: list[str] = []
    for option_id in dict.fromkeys(answer.selected_options):
        option = source.option(option_id)
        label = option.label if option is not None else option_id
        wanted = normalise(label)
        match = next((o for o in member.options if normalise(o.label) == wanted), None)
        if match is None:
            return NoSuchOption(label)
        chosen.append(match.option_id)
    return Answer(
        question_id=member.question_id, selected_options=chosen, custom_text=answer.custom_text
    )


# ---- what Send to all returns ------------------------------------------------------------------


@dataclass(frozen=True)
class Offer:
    """Offer ``user`` to send the answer that won ``card`` to its group's ``members`` (their
    pending ids)."""

    card: Card
    user_id: str
    choice: PastChoice
    members: tuple[str, ...]


@dataclass(frozen=True)
class MemberSend:
    """One member: the request to admit and the answer to send through the one pipeline."""

    card: Card
    request: Request
    answers: tuple[Answer, ...]


@dataclass(frozen=True)
class ToSendAll:
    """Send was clicked by the person whose answer won ``source``."""

    source: Card
    user_id: str
    choice: PastChoice
    sends: tuple[MemberSend, ...]
    #: Members that have no option of the chosen label (not sent; audited).
    unmapped: tuple[tuple[Card, str], ...] = ()


@dataclass(frozen=True)
class NotYours:
    """The card the button names is not one this person's answer won (or no card at all):
    nothing is sent (audited as tampered)."""

    why: str


SendAll = ToSendAll | NotYours


@dataclass(eq=False)
class Groups(GroupLines):
    """Send to all, on a card's group (:class:`GroupLines`: who is in it)."""

    cards: GroupCards
    audit_log: Audit | None = None

    def offer(self, card: Card, user_id: str) -> Offer | None:
        """After ``user_id``'s answer won ``card``: the offer to send it to the group's other
        waiting members (None: nothing to offer)."""
        outcome = card.outcome
        if not _won_by(card, user_id) or outcome is None or not one_question(card):
            return None
        members = self.member_ids(card)
        if not members:
            return None
        choice = past_choices(card.bundle, outcome.answers)
        return Offer(card, user_id, choice[0] if choice else PastChoice(), tuple(members))

    def send_all(
        self,
        pending_id: str,
        user_id: str,
        *,
        channel: str | None,
        redelivery: bool = False,
        members: Sequence[str] | None = None,
    ) -> SendAll:
        """Send on the offer of ``pending_id``'s answer: the requests for every member, mapped;
        ``channel``: where Send was clicked (on a member's own channel, the request is on its
        card; else as a form naming it: admitted alike, the channel's members asked);
        ``redelivery``: Slack's copy of the click;
        ``members``: exactly the bundles the offer named (each read again: one of the group
        still, or resolved since; any other is left out), None for an offer made before it
        named them (the group as it is now)."""
        card = self.cards.get(pending_id) if pending_id else None
        if card is None or not _won_by(card, user_id) or card.outcome is None:
            return NotYours("not a card this person's answer won")
        key = group_key(card)
        if key is None or not one_question(card):
            return NotYours("not a one-question card")
        answer = card.outcome.answers[0] if card.outcome.answers else None
        if answer is None:
            return NotYours("no answer recorded")
        if members is None:
            found = self.cards.same_item(
                key,
                card.channel,
                exclude=card.pending_id,
                resolved_since_of=card.pending_id,
                limit=MAX_GROUP,
            )
        else:
            found = self._named(card, key, members)
        source = card.bundle.questions[0]
        sends: list[MemberSend] = []
        unmapped: list[tuple[Card, str]] = []
        for member in (m for m in found if one_question(m)):
            question = member.bundle.questions[0]
            mapped = map_answer(source, answer, question)
            if isinstance(mapped, NoSuchOption):
                unmapped.append((member, mapped.label))
                self._audit(member, user_id, "no_option", f"no option {mapped.label!r}")
                continue
            request = _request(member, user_id, mapped, card, channel)
            request = replace(request, redelivery=True) if redelivery else request
            sends.append(MemberSend(member, request, (mapped,)))
        choice = past_choices(card.bundle, card.outcome.answers)
        return ToSendAll(
            card, user_id, choice[0] if choice else PastChoice(), tuple(sends), tuple(unmapped)
        )

    def _named(self, card: Card, key: str, members: Sequence[str]) -> list[Card]:
        """The bundles the offer named, read again: those still asking ``card``'s question in
        its channel (waiting, or resolved since: the pipeline says so per member)."""
        named: list[Card] = []
        for pending_id in dict.fromkeys(members[:MAX_GROUP]):
            member = self.cards.get(pending_id) if pending_id != card.pending_id else None
            if member is None or member.channel != card.channel or group_key(member) != key:
                log.warning(
                    "answer to all from %s: %s is not of its group", card.pending_id, pending_id
                )
                continue
            named.append(member)
        return named

    def declined(self, pending_id: str, user_id: str) -> None:
        """No thanks on the offer: nothing is sent (audited on the answered card)."""
        card = self.cards.get(pending_id) if pending_id else None
        if card is not None and _won_by(card, user_id):
            self._audit(card, user_id, "declined", "no thanks")

    def _audit(self, card: Card, user_id: str, result: str, detail: str) -> None:
        if self.audit_log is None:
            return
        try:
            self.audit_log.audit(card.pending_id, user_id, "answer", SOURCE, result, detail)
        except Exception:  # what the person is told does not depend on it
            log.exception("could not audit an answer to all for %s", card.pending_id)


def _won_by(card: Card, user_id: str) -> bool:
    outcome = card.outcome
    return (
        card.state is CardState.ANSWERED
        and outcome is not None
        and outcome.via == "slack"
        and outcome.by_user == user_id
    )


def _request(
    member: Card, user_id: str, answer: Answer, source: Card, channel: str | None
) -> Request:
    """The request for one member: on its channel card when Send was clicked there, else as a
    form naming that message (admitted alike: who may answer is asked on every path)."""
    option = (answer.question_id, answer.selected_options[0]) if answer.selected_options else None
    return Request(
        user_id=user_id,
        action="answer",
        source=SOURCE,
        via="card",
        pending_id=member.pending_id,
        channel=member.channel,
        ts=member.ts,
        option=option if len(answer.selected_options) == 1 else None,
        form=channel != member.channel,
        detail=f"answer to all from {source.pending_id}",
    )


# ------------------------------------------------------------------------------------------
# How each member of a Send to all ended (kandev_slack/usecases/answering/groups.py), from the one
# pipeline's

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
