"""The one admission step: may this interaction go ahead, and on which card?

Every interaction that acts on a bundle — a card button, a modal submission, the listing's or
the App Home's "Answer…", the "Reject agent question" shortcut — is described by a
:class:`Request` (built from the Slack payload by kandev_slack/slack/parsing/requests.py) and
admitted here
before anything else happens. Admission locates the card, checks that the payload names what it
was made for (not tampered with), the channel, the card's state and the person's permission,
and audits every refusal. A refusal is typed (:class:`Refusal`: a kind and the data the words
for the person need); the edge words it (kandev_slack/slack/presenters/tell.py).

A new refusal rule goes here, in :meth:`Admission.admit`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import KW_ONLY, dataclass
from typing import Any, Literal

from kandev_slack.core.domain import Action, Card, CardOutcome
from kandev_slack.kinds.registry import label_of_key, spec_of
from kandev_slack.ops import metrics
from kandev_slack.ops.logs import bind_log_context
from kandev_slack.store import AuditRepository, CardsRepository
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.identity import Acting, Identities
from kandev_slack.usecases.views.waiting import WaitingQueue

log = logging.getLogger(__name__)

#: Where an interaction comes from: a card message, the listing, the App Home, the shortcut.
Via = Literal["card", "list", "home", "shortcut"]
#: The form a click opens ("" for a click that is the whole answer): "Answer…", "Other
#: answer…", "Reject…" (a parked click that opens a form offers to open it again).
Opens = Literal["", "answer", "other", "reject"]

RefusalKind = Literal[
    "malformed",  # the payload lacks what Slack always sends
    "tampered",  # it names something this app did not make for this card
    "unknown_bundle",  # no card and nothing waiting in Kandev by that id
    "not_a_card",  # the shortcut was used on another message
    "wrong_channel",  # the card's message, but another channel than the card's
    "closed",  # the shortcut on a card that is already resolved
    "already_answered",  # this person already resolved it
    "redelivered",  # Slack's copy of a click this person's answer already resolved: silent
    "resolved_already",  # someone else resolved it
    "forbidden",  # the route does not let this person answer
    "unverifiable",  # who may answer could not be read from Slack (membership): try again
    "unknown_action",  # a button this app does not handle (any more)
    "unknown_form",  # a form this app does not handle
    "unknown_shortcut",  # a shortcut this app does not handle
    # Whose Kandev account (kandev_slack/usecases/identity.py): nothing is sent to Kandev.
    "connect",  # a route that requires a linked account; the person has none (click parked)
    "reconnect",  # the person's link is broken (Kandev refused their token)
    "viewer",  # their role in the task's workspace may not answer agents
    "not_visible",  # their Kandev account cannot see the task's workspace
    "unreachable",  # Kandev could not be asked what their account may do: try again
]

#: Snooze / Unsnooze: the person's own views change, nothing is sent to Kandev.
SNOOZING: frozenset[Action] = frozenset({"snooze", "unsnooze"})

#: Refusals after which the very same interaction may simply be tried again in a moment
#: (Kandev could not be asked what the person's account may do): what they clicked or typed is
#: given back where it can be (a thread reply's Send, a submitted form).
TRY_AGAIN: frozenset[RefusalKind] = frozenset({"unreachable"})

#: Refusals a form shows as a field error (the form itself is not what it claims to be);
#: the others close the form and tell the person.
FORM_ERRORS: frozenset[RefusalKind] = frozenset({"malformed", "tampered", "unknown_bundle"})


@dataclass(frozen=True)
class Request:
    """One person's interaction with a bundle, as the payload describes it (untrusted)."""

    user_id: str
    action: Action
    source: str  # for the audit: slack:button, slack:modal:<via>, slack:shortcut
    via: Via
    pending_id: str | None = None  # the bundle the payload names (button value, form metadata)
    channel: str | None = None  # the card message's channel (card and shortcut)
    ts: str | None = None  # the card message's ts (card and shortcut)
    option: tuple[str, str] | None = None  # a one-click answer: (question_id, option_id)
    form: bool = False  # channel/ts come from a form's metadata (else from Slack's container)
    detail: str = ""  # what the audit of a refusal records about the payload
    redelivery: bool = False  # Slack delivered it again (retry_attempt / X-Slack-Retry-Num ≥ 1)
    hours: int = 0  # a snooze's length (the "Snooze…" option chosen)
    #: A group row's "Snooze…": every item of the row (re-derived at click time), not one.
    group: bool = False
    opens: Opens = ""  # the form the click opens (a button that opens one)
    #: The person's team as Slack's payload names it (``user.team_id``; "" where it names
    #: none): the app's own spares the look-up of their organisation.
    user_team: str = ""


@dataclass(frozen=True)
class Where:
    """Where the person who interacted can be told something."""

    user_id: str
    channel: str | None = None
    response_url: str | None = None


@dataclass(frozen=True)
class Unusable:
    """A payload that cannot become a Request (kandev_slack/slack/parsing/requests.py): refused and
    audited by
    :meth:`Admission.refuse`."""

    kind: RefusalKind
    detail: str
    action: str  # for the audit: answer, reject, or the unknown thing's kind
    source: str
    where: Where
    pending_id: str | None = None


@dataclass(frozen=True)
class Refusal:
    """Why an interaction may not go ahead, with what the words for the person need:
    ``outcome`` (how the card ended: ``closed``, ``already_answered``, ``resolved_already``),
    ``action`` (what they tried) and ``channel`` (the card's, for ``wrong_channel``)."""

    kind: RefusalKind
    card: Card | None = None
    _: KW_ONLY
    outcome: CardOutcome | None = None
    action: Action = "answer"
    channel: str = ""


@dataclass(frozen=True)
class Admitted:
    request: Request
    card: Card
    #: The Kandev client (and link) the person acts with (kandev_slack/usecases/identity.py).
    acting: Acting[Any]


#: How long an interaction on a message that is still being recorded waits for it. The
#: publisher records a message's ts just after Slack answers chat.postMessage; a click that
#: lands in between is on the bundle's message all the same.
POSTING_WAIT_S = 1.5
_POSTING_POLL_S = 0.05


@dataclass(eq=False)
class Admission:
    cards: CardsRepository
    audit_log: AuditRepository
    queue: WaitingQueue
    answerers: Answerers
    identities: Identities[Any]
    posting_wait_s: float = POSTING_WAIT_S

    def admit(self, request: Request) -> Admitted | Refusal:
        """Admit ``request`` or refuse it (audited)."""
        located = self._locate(request)
        if isinstance(located, Refusal):
            return self._refused(request, located)
        card = located
        refusal = self._option_problem(request, card) or self._state_problem(request, card)
        # Whoever can read a message can click it (a public channel is read without joining
        # it): on every path, the card's message included, the channel's members are asked.
        # Snoozing changes only the person's own views, but it is offered only to those who
        # may answer: it is admitted by the same rule (a guest not in the channel may not).
        if refusal is None:
            refusal = self._permission_problem(request, card)
        if refusal is not None:
            return self._refused(request, refusal)
        # Last, whose Kandev account it is made with: the route's answerers apply first.
        acting = self.identities.acting(request.user_id, card, request.action)
        if isinstance(acting, str):
            if acting == "connect":
                self.identities.park(request.user_id, card.pending_id, parked_request(request))
            return self._refused(request, Refusal(acting, card, action=request.action))
        bind_log_context(pending_id=card.pending_id)  # the rest of this interaction's lines
        return Admitted(request, card, acting)

    def refuse(self, unusable: Unusable) -> Refusal:
        """Refuse an interaction that could not even be described as a Request (a malformed
        payload, an unknown action, a tampered form): audit it and return it."""
        kind, source = unusable.kind, unusable.source
        metrics.answer(source, "", kind, item=label_of_key(unusable.pending_id))
        entry = (unusable.action, source, kind, unusable.detail)
        self._audit(unusable.pending_id, unusable.where.user_id, *entry)
        return Refusal(kind)

    def card_at(self, channel: str | None, ts: str | None) -> Card | None:
        """The card posted at (channel, ts) — its channel card or any other message of it
        (an escalation card, a DM card) — if this message is one."""
        return self.cards.by_any_message(channel, ts) if channel and ts else None

    # ---- the rules -----------------------------------------------------------------------

    def _locate(self, request: Request) -> Card | Refusal:
        if request.via in ("card", "shortcut") and not request.form:
            return self._on_message(request)
        card = self.queue.card_for(request.pending_id) if request.pending_id else None
        if card is None:
            return Refusal("unknown_bundle")
        if request.form and request.via == "card" and not self._same_message(card, request):
            return Refusal("tampered", card)
        return card

    def _on_message(self, request: Request) -> Card | Refusal:
        """A card message is recognised by (channel, ts) in the store, never by what the
        payload claims; what the payload names must be that card's bundle."""
        card = self.card_at(request.channel, request.ts)
        if card is None:  # its post may be being recorded, or was just after the first look
            posting = self._being_posted(request.pending_id, request.channel)
            card = self._recorded(request.channel, request.ts, wait=posting)
        if card is None:
            if request.via == "shortcut":
                return Refusal("not_a_card")
            named = self.cards.get(request.pending_id) if request.pending_id else None
            if named is not None and named.ts == request.ts:
                # The card's message, but the interaction claims another channel.
                return Refusal("wrong_channel", channel=named.channel)
            return Refusal("unknown_bundle")
        if request.pending_id is not None and card.pending_id != request.pending_id:
            return Refusal("tampered", card)
        return card

    def _being_posted(self, pending_id: str | None, channel: str | None) -> bool:
        """Whether the bundle ``pending_id`` names has a message in ``channel`` whose ts is
        not recorded yet (posted to Slack, or being posted, a moment ago)."""
        card = self.cards.get(pending_id) if pending_id else None
        if card is None or card.state.terminal or not channel:
            return False
        if card.ts is None and card.channel == channel:
            return True
        return any(
            copy.ts is None and copy.channel in (channel, None)
            for copy in self.cards.messages_of(card.pending_id)
        )

    def _recorded(self, channel: str | None, ts: str | None, *, wait: bool) -> Card | None:
        """The card at (channel, ts) once its post is recorded, waiting at most
        ``posting_wait_s`` when ``wait`` (else one more look); still recognised by the store,
        never by the payload's claim."""
        deadline = time.monotonic() + (self.posting_wait_s if wait else 0.0)
        while True:
            card = self.card_at(channel, ts)
            if card is not None or time.monotonic() >= deadline:
                return card
            time.sleep(_POSTING_POLL_S)

    def _same_message(self, card: Card, request: Request) -> bool:
        """A form opened from a card names one of that card's words."""
        if _same_message(card, request):
            return True
        if not (request.channel and request.ts):
            return False
        other = self.cards.by_any_message(request.channel, request.ts)
        return other is not None and other.pending_id == card.pending_id

    def _permission_problem(self, request: Request, card: Card) -> Refusal | None:
        """The person may not act on ``card``, or that cannot be checked now (fail closed)."""
        try:
            allowed = self.answerers.may_answer_card(
                card, request.user_id, strict=True, team=request.user_team
            )
        except Exception:  # Slack could not say who is in the channel, or of which organisation
            log.warning("could not check who may act on %s; refused", card.pending_id)
            return Refusal("unverifiable", card)
        return None if allowed else Refusal("forbidden", card)

    @staticmethod
    def _option_problem(request: Request, card: Card) -> Refusal | None:
        """The payload names an option (or an action) this card never offered."""
        if request.action in ("claim", "release"):
            return None  # "I'm on it" names no option: only the card, located above
        if request.action in SNOOZING:
            # Offered on Home items and DM cards of questions only: never on a channel card,
            # never on an approval.
            on_channel_card = request.via == "card" and request.channel == card.channel
            return (
                Refusal("tampered", card)
                if on_channel_card or not spec_of(card).snoozable
                else None
            )
        refused = spec_of(card).refusal(card, request.action, request.via, request.option)
        if refused == "not_a_card":
            return Refusal("not_a_card")
        return None if refused is None else Refusal("tampered", card)

    @staticmethod
    def _state_problem(request: Request, card: Card) -> Refusal | None:
        if not card.state.terminal or request.action == "view":
            return None  # reading the conversation of a resolved question changes nothing
        outcome = card.outcome or CardOutcome(state=card.state, at=card.updated_at)
        if request.via == "shortcut" and not request.form:
            return Refusal("closed", card, outcome=outcome, action=request.action)
        kind: RefusalKind = (
            "already_answered" if outcome.by_user == request.user_id else "resolved_already"
        )
        if kind == "already_answered" and request.redelivery:
            kind = "redelivered"  # the person was told when the first copy was answered
        return Refusal(kind, card, outcome=outcome, action=request.action)

    # ---- the audit -----------------------------------------------------------------------

    def _refused(self, request: Request, refusal: Refusal) -> Refusal:
        pending_id = refusal.card.pending_id if refusal.card is not None else request.pending_id
        metrics.answer(request.source, request.via, refusal.kind, item=label_of_key(pending_id))
        self._audit(
            pending_id,
            request.user_id,
            request.action,
            request.source,
            refusal.kind,
            request.detail,
        )
        return refusal

    def _audit(self, pending_id: str | None, user: str | None, *entry: str) -> None:
        """``entry``: action, source, result, detail (as ``AuditRepository.audit`` takes them)."""
        try:
            self.audit_log.audit(pending_id, user or None, *entry)
        except Exception:  # the refusal still reaches the person
            log.exception("could not audit a refused %s", entry[0])


#: What of a parked click is kept (kandev_slack/usecases/identity.py ``PARKED_FOR_S``): enough
#: to offer it again, after a fresh admission, once the person connected.
PARKED_FIELDS = ("action", "source", "via", "pending_id", "channel", "ts", "option", "opens")


def parked_request(request: Request) -> dict[str, object]:
    """The parts of ``request`` a parked click keeps (JSON-ready)."""
    kept: dict[str, object] = {name: getattr(request, name) for name in PARKED_FIELDS}
    kept["option"] = list(request.option) if request.option else None
    kept["form"] = request.form
    return kept


def unparked_request(user_id: str, kept: dict[str, object]) -> Request | None:
    """A parked click as a request again (None: it is not one this release can read)."""
    action, via, opens = kept.get("action"), kept.get("via"), kept.get("opens") or ""
    channel, ts, option = kept.get("channel"), kept.get("ts"), kept.get("option")
    if action not in _PARKABLE or via not in _VIAS or opens not in _OPENS:
        return None
    if not all(isinstance(v, str | None) for v in (channel, ts)):
        return None
    if option is not None and not (
        isinstance(option, list) and len(option) == 2 and all(isinstance(o, str) for o in option)
    ):
        return None
    pending_id = kept.get("pending_id")
    if not isinstance(pending_id, str) or not pending_id:
        return None
    return Request(
        user_id=user_id,
        action=action,  # type: ignore[arg-type]
        source=str(kept.get("source") or "slack:button"),
        via=via,  # type: ignore[arg-type]
        pending_id=pending_id,
        channel=channel,  # type: ignore[arg-type]
        ts=ts,  # type: ignore[arg-type]
        option=(option[0], option[1]) if isinstance(option, list) else None,
        form=bool(kept.get("form")),
        opens=opens,  # type: ignore[arg-type]
    )


#: What a parked click may be (kandev_slack/usecases/identity.py ``ACTS_IN_KANDEV``), from
#: where, opening which form.
_PARKABLE = frozenset({"answer", "reject", "approve", "claim"})
_VIAS = frozenset({"card", "list", "home", "shortcut"})
_OPENS = frozenset({"", "answer", "other", "reject"})


def _same_message(card: Card, request: Request) -> bool:
    """A form opened from a card names that card's message."""
    if card.channel != request.channel:
        return False
    return not (card.ts and request.ts and card.ts != request.ts)
