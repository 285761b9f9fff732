"""The words for what the use-cases return: refusals, verdicts, unusable payloads, and every
result of an interaction (:func:`words_for`: claims and snoozes too).

The use-cases return kinds and the data the words need
(kandev_slack/usecases/answering/admission.py,
kandev_slack/usecases/answering/verdicts.py); the sentences are chosen here, at the edge, from
kandev_slack/cards/words.py. Pure.
"""

from __future__ import annotations

from kandev_slack.cards import words
from kandev_slack.cards.parts import claims
from kandev_slack.core.approval import Approval
from kandev_slack.core.clarification import Bundle
from kandev_slack.core.domain import Card, CardOutcome
from kandev_slack.kinds.approval.cards.card import (
    approval_already_message,
    approval_ended_message,
    approval_lost_message,
    approval_undecided_message,
)
from kandev_slack.kinds.registry import spec_of
from kandev_slack.surfaces import snooze
from kandev_slack.usecases.answering.admission import Refusal, Unusable
from kandev_slack.usecases.answering.claims import (
    Contended,
    NotClaimed,
    NotHolder,
    OnIt,
    Redelivered,
    Released,
)
from kandev_slack.usecases.answering.interactions import (
    Busy,
    FieldErrors,
    Refused,
    Result,
    Unrecorded,
)
from kandev_slack.usecases.answering.snooze import (
    NotSnoozed,
    SnoozeContended,
    Snoozed,
    SnoozeRedelivered,
    Unsnoozed,
)
from kandev_slack.usecases.answering.verdicts import Problem, Verdict


def unusable(payload: Unusable) -> str:
    """For a payload that could not become a request."""
    return words.unusable_message(payload.kind, form=payload.source == "slack:modal")


def refusal(refused: Refusal) -> str:
    """Why an interaction may not go ahead."""
    kind = refused.kind
    approval = _approval(refused.card)
    if approval is not None and kind in ("already_answered", "resolved_already", "closed"):
        outcome = _outcome(refused.outcome)
        if kind == "already_answered":
            return approval_already_message(approval, outcome)
        return approval_lost_message(approval, outcome)
    on_approval = approval is not None or refused.action == "approve"
    match kind:
        case "forbidden":
            return words.forbidden_message(approval=on_approval)
        case "unverifiable":
            return words.unverifiable_message(approval=on_approval)
        case "connect":
            return words.connect_message(approval=on_approval)
        case "reconnect":
            return words.reconnect_message()
        case "viewer":
            return words.viewer_message(approval=on_approval)
        case "not_visible":
            return words.not_visible_message()
        case "unreachable":
            return words.identity_unreachable_message()
        case "unknown_bundle":
            return words.unknown_bundle_message()
        case "not_a_card":
            return words.not_a_card_message()
        case "wrong_channel":
            return words.wrong_channel_message(refused.channel, approval=on_approval)
        case "closed":
            return words.closed_card_message(_outcome(refused.outcome), _bundle(refused))
        case "already_answered":
            return words.already_answered_message(_bundle(refused), _outcome(refused.outcome))
        case "redelivered":
            return ""
        case "resolved_already":
            outcome = _outcome(refused.outcome)
            return words.resolved_already_message(_bundle(refused), outcome, action=refused.action)
    return words.unusable_message(kind, form=False)


def verdict(said: Verdict) -> str:
    """How a submission ended ("" when the card says it all)."""
    approval = _approval(said.card)
    if approval is not None:
        told = _approval_verdict(approval, said)
        if told is not None:
            return told
    action = said.action
    match said.kind:
        case "won":
            return ""
        case "lost":
            return words.lost_message(_verdict_bundle(said), _outcome(said.outcome), action=action)
        case "undecided":
            outcome = _outcome(said.outcome)
            return words.undecided_message(_verdict_bundle(said), outcome, action=action)
        case "already_answered":
            return words.already_answered_message(_verdict_bundle(said), _outcome(said.outcome))
        case "ended":
            return words.ended_message()
        case "unavailable":
            return words.unavailable_message()
        case "invalid":
            return problem(said.problem or Problem())
        case "not_recorded" if said.gave_up:
            return words.gave_up_message(action=action, recorded=False)
        case "not_recorded":
            cause = said.cause or "unreachable"
            return words.not_recorded_message(
                action=action, cause=cause, retry_after=said.retry_after
            )
        case "unconfirmed" if said.gave_up:
            return words.gave_up_message(action=action, recorded=None)
        case "unconfirmed":
            return words.unconfirmed_message(action=action)
        case "unknown_bundle":
            return words.unknown_bundle_message()
        case "forbidden":
            return words.forbidden_message(approval=action == "approve")
        case "duplicate":
            return words.still_checking_message(action=action) if said.checking else ""
        case "not_visible":
            return words.not_visible_message()
        case "relink":
            return words.reconnect_message()
        case "viewer":
            return words.viewer_message(approval=action == "approve")
        case "connect":
            return words.connect_message(approval=action == "approve")
    raise AssertionError(f"unexpected verdict {said.kind!r}")


def _approval_verdict(approval: Approval, said: Verdict) -> str | None:
    """The verdicts an approval words on its own (None: worded as for a question)."""
    match said.kind:
        case "lost":
            return approval_lost_message(approval, _outcome(said.outcome))
        case "undecided":
            return approval_undecided_message(approval, _outcome(said.outcome))
        case "already_answered":
            return approval_already_message(approval, _outcome(said.outcome))
        case "ended" | "unavailable":
            card = said.card
            assert card is not None
            ended = card.outcome or CardOutcome(state=card.state, at=card.updated_at)
            return approval_ended_message(ended)
    return None


def _approval(card: Card | None) -> Approval | None:
    return card.approval if card is not None and spec_of(card).has_whole_view else None


def problem(found: Problem) -> str:
    """What Kandev (or the bot, before sending) found wrong with a submission."""
    if found.legacy:
        return found.legacy  # worded by an older version when it finished the submission
    if found.length is not None:
        return words.too_long_message(found.length)
    if found.found is not None:
        return words.invalid_message(words.found_detail(found.found))
    return words.invalid_message(found.detail)


def recovered(said: Verdict) -> str:
    """What the person hears about a submission crash recovery settled."""
    return words.recovered_message(verdict(said), won=said.kind == "won")


def _outcome(outcome: CardOutcome | None) -> CardOutcome:
    assert outcome is not None, "a refusal or verdict about how a card ended names the outcome"
    return outcome


def _bundle(refused: Refusal) -> Bundle:
    assert refused.card is not None, f"a {refused.kind} refusal names its card"
    return refused.card.bundle


def _verdict_bundle(said: Verdict) -> Bundle:
    assert said.card is not None, f"a {said.kind} verdict names its card"
    return said.card.bundle


#: The refusals after which the person is asked to connect their Kandev account (again).
CONNECT_REFUSALS = frozenset({"connect", "reconnect"})


def asks_to_connect(result: Result) -> bool:
    """Whether ``result`` asks the person to connect their Kandev account (again): its words
    go with a Connect button (kandev_slack/surfaces/connect.py)."""
    match result:
        case Refused(refusal=refused, unusable=None):
            return refused.kind in CONNECT_REFUSALS
        case Verdict(kind="relink"):
            return True
    return False


def words_for(result: Result) -> str:
    """What the person is told about ``result`` ("" when there is nothing to say)."""
    match result:
        case Busy():
            return words.busy_message()
        case Unrecorded():
            return words.unrecorded_message()
        case Refused(unusable=payload) if payload is not None:
            return unusable(payload)
        case Refused(refusal=refused):
            return refusal(refused)
        case Verdict():
            return verdict(result)
        case FieldErrors(errors=errors):
            return next(iter(errors.values()), "")
        case OnIt(claim=claim, took_from=took_from, renewed=renewed):
            return claims.on_it_message(claim, took_from=took_from, renewed=renewed)
        case Released():
            return claims.released_message()
        case NotHolder(holder=holder):
            return claims.not_holder_message(holder)
        case NotClaimed():
            return claims.not_claimed_message()
        case Contended(card=card):
            return claims.contended_message(resolved=card.state.terminal)
        case Redelivered() | SnoozeRedelivered():
            return ""  # its first copy was answered
        case Snoozed(snooze=chosen, inbox=inbox):
            return snooze.snoozed_message(chosen, inbox)
        case Unsnoozed(inbox=inbox):
            return snooze.unsnoozed_message(inbox)
        case NotSnoozed():
            return snooze.not_snoozed_message()
        case SnoozeContended():
            return snooze.contended_message()
    return ""
