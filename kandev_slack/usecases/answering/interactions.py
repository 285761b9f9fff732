"""One interaction pipeline: a button click or a form submission, end to end.

reserve a place (the answering lane; full: :class:`Busy`) → admit
(kandev_slack/usecases/answering/admission.py;
refused: :class:`Refused`) → read the form (:class:`FieldErrors` keep it open) → record the
submission durably (``AnswerService.begin``) → acknowledge (``Reply.recorded``) → send it to
Kandev in the lane (``AnswerService.complete``) → the verdict (``Reply.later``).

What the person is told is no concern of this module: each step ends in a typed result, handed
to the interaction's :class:`Reply` (kandev_slack/slack/presenters/tell.py maps each kind to what
Slack shows: an
ephemeral message, the modal updated, field errors). A result handed to :meth:`Reply.now` means
nothing was recorded; :meth:`Reply.recorded` means it was (a crash after it is left to crash
recovery), and :meth:`Reply.later` follows with how it ended.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from kandev_slack.core.clarification import SKIPPED_REASON, Answer
from kandev_slack.core.domain import Action, Card
from kandev_slack.ops import metrics
from kandev_slack.ops.urgency import Urgency, Urgent
from kandev_slack.store.errors import is_unavailable
from kandev_slack.usecases.answering.admission import Admitted, Refusal, Request, Unusable, Where
from kandev_slack.usecases.answering.answers import Begun
from kandev_slack.usecases.answering.claims import ClaimResult
from kandev_slack.usecases.answering.groups import SOURCE as ANSWER_ALL
from kandev_slack.usecases.answering.groups import Offer
from kandev_slack.usecases.answering.snooze import SnoozeResult
from kandev_slack.usecases.answering.verdicts import Verdict

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How long a Send-to-all offer waits, at most, for the urgent work in flight (acks, answers
#: not yet sent to Kandev) before it is made.
OFFER_YIELD_S = 0.25

# ---- the ports ---------------------------------------------------------------------------


class Told(Protocol):
    """How an interaction that records nothing is answered: a refusal, busy, a form opened,
    a claim's or a snooze's change (the narrow port of :meth:`Interactions.admit`,
    :meth:`Interactions.claim`, :meth:`Interactions.snooze`)."""

    def now(self, result: Result) -> None:
        """The interaction's one answer, nothing recorded (a click: ack, then tell)."""


class Reply(Told, Protocol):
    """How one interaction that sends to Kandev is answered (a click, a form, a thread
    reply's Send: kandev_slack/slack/presenters/tell.py)."""

    def recorded(self) -> None:
        """The submission is recorded durably: acknowledge it; :meth:`later` follows."""

    def later(self, verdict: Verdict) -> None:
        """How a recorded submission ended, once Kandev answered."""

    def offer(self, offer: Offer) -> None:
        """After the person's answer won a grouped card: offer to send it to the others
        (kandev_slack/usecases/answering/groups.py)."""


class ViewReply(Told, Protocol):
    """How a click that opens a view to fill in (the Conversation view) is answered: it
    records and sends nothing."""

    def opened(self, card: Card) -> Callable[[], None] | None:
        """Open the view of ``card`` at once; the job that fills it in (run in the reading
        lane), or None when it could not be opened (the person was told)."""


class Described(Protocol):
    """A parsed click or shortcut (kandev_slack/slack/parsing/requests.py ``Interaction``)."""

    @property
    def request(self) -> Request: ...


class Submitted(Described, Protocol):
    """A parsed form submission (kandev_slack/slack/parsing/requests.py ``Form``)."""

    @property
    def values(self) -> dict[str, dict[str, dict[str, Any]]]: ...

    @property
    def view_id(self) -> str: ...


class Place(Protocol):
    def run(self, fn: Callable[..., T], *args: Any) -> Future[T]: ...
    def release(self) -> None: ...


class Lane(Protocol):
    def reserve(self) -> Place | None: ...


class Admitting(Protocol):
    def admit(self, request: Request) -> Admitted | Refusal: ...
    def refuse(self, unusable: Unusable) -> Refusal: ...


class Answering(Protocol):
    def begin(
        self,
        admitted: Admitted,
        *,
        answers: tuple[Answer, ...] = (),
        reason: str = "",
        view_id: str = "",
    ) -> Verdict | Begun: ...
    def complete(self, begun: Begun, *, sending: Callable[[], None] | None = None) -> Verdict: ...


class Offering(Protocol):
    def offer(self, card: Card, user_id: str) -> Offer | None: ...
    def members(self, card: Card) -> list[Card]: ...


class Claiming(Protocol):
    def take(self, admitted: Admitted) -> ClaimResult: ...
    def release(self, admitted: Admitted) -> ClaimResult: ...


class Snoozing(Protocol):
    def snooze(self, admitted: Admitted, hours: int) -> SnoozeResult: ...
    def unsnooze(self, admitted: Admitted) -> SnoozeResult: ...


# ------------------------------------------------------------------------------------------
# What an interaction ends with (kandev_slack/usecases/answering/interactions.py): what a submitted
# form says,


@dataclass(frozen=True)
class Content:
    """What a submitted form says: the answers, or the rejection's reason."""

    answers: tuple[Answer, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class FieldErrors:
    """The form stays open with these messages (block_id -> safe mrkdwn, from the form's own
    reader in kandev_slack/kinds/question/cards/modals.py) under its fields; nothing was
    recorded."""

    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ForeignInputs:
    """Inputs of another bundle than the one the form names (tampered with)."""

    detail: str


# ---- the results -------------------------------------------------------------------------


@dataclass(frozen=True)
class Busy:
    """The lane is full: nothing was recorded, the person may try again in a moment."""


@dataclass(frozen=True)
class Unrecorded:
    """The bot's database refused to record it (unreachable, or its file lost): nothing was
    recorded or sent; the person may try again once the bot is back to normal."""


@dataclass(frozen=True)
class Refused:
    """Not admitted (audited): ``refusal`` says why; ``unusable``: the payload could not even
    be read as a request."""

    refusal: Refusal
    unusable: Unusable | None = None


#: How an interaction ends: not admitted, busy, the form's field errors, admitted to open a
#: form or a view (:class:`~kandev_slack.usecases.answering.admission.Admitted`), a submission's
#: verdict, or a
#: claim's change ("I'm on it"), or a snooze's.
Result = Busy | Unrecorded | Refused | FieldErrors | Admitted | Verdict | ClaimResult | SnoozeResult


#: Reads a submitted form of ``card`` (kandev_slack/slack/parsing/forms.py ``read_form``).
FormReader = Callable[[Card, Action, dict[str, Any]], Content | FieldErrors | ForeignInputs]


# ---- the pipeline ------------------------------------------------------------------------


@dataclass(eq=False)
class Interactions:
    admission: Admitting
    answers: Answering
    #: Answers and rejections on their way to Kandev (they may outlast an ack).
    answering: Lane
    #: Conversation views (and listings, Home tabs: kandev_slack/slack/listeners).
    reading: Lane
    read_form: FormReader
    #: "I'm on it" (kandev_slack/usecases/answering/claims.py).
    claims: Claiming
    #: Snooze / Unsnooze (kandev_slack/usecases/answering/snooze.py).
    snoozes: Snoozing
    #: Identical questions: after a win, the offer to answer them all
    #: (kandev_slack/usecases/answering/groups.py).
    groups: Offering
    #: The urgent work in flight (kandev_slack/ops/urgency.py): an answer counts from its
    #: record until it is sent to Kandev (None: nothing counted, e.g. some tests).
    urgency: Urgency | None = None
    #: Follow-up work after an answer's verdict (the Send-to-all offer): a bounded lane of
    #: its own, after the urgent work in flight (None: made in the answering lane).
    followups: Lane | None = None

    def click(self, parsed: Described | Unusable, reply: Reply) -> None:
        """A one-click answer (an option button): reserve, admit, record, ack, send, verdict."""
        with _unrecorded(reply):
            self._click(parsed, reply)

    def submit(self, parsed: Submitted | Unusable, reply: Reply) -> None:
        """A submitted form: admit, read it, reserve, record, ack, send, verdict."""
        with _unrecorded(reply):
            self._submit(parsed, reply)

    def _click(self, parsed: Described | Unusable, reply: Reply) -> None:
        held = self._reserve_and_admit(self.answering, parsed, reply)
        if held is None:  # refused, or busy: nothing recorded, the person clicks again later
            return
        place, admitted = held
        question_id, option_id = admitted.request.option or ("", "")
        answer = Answer(question_id=question_id, selected_options=[option_id])
        self._send(place, admitted, reply, answers=(answer,))

    def _submit(self, parsed: Submitted | Unusable, reply: Reply) -> None:
        if isinstance(parsed, Unusable):
            reply.now(self.refuse_unusable(parsed))
            return
        request = parsed.request
        admitted = self.admission.admit(request)
        if isinstance(admitted, Refusal):
            reply.now(Refused(admitted))
            return
        content = self.read_form(admitted.card, request.action, parsed.values)
        if isinstance(content, ForeignInputs):
            reply.now(Refused(self._foreign(request, admitted.card, content)))
            return
        if isinstance(content, FieldErrors):
            reply.now(content)
            return
        place = self.answering.reserve()
        if place is None:  # nothing recorded: the form stays open to be sent again
            reply.now(Busy())
            return
        self._send(
            place,
            admitted,
            reply,
            answers=content.answers,
            reason=content.reason,
            view_id=parsed.view_id or "",
        )

    def skip(self, parsed: Described | Unusable, reply: Reply) -> None:
        """Skip: a rejection with Kandev's own Skip reason, sent as a click is (reserve,
        admit, record, ack, send, verdict)."""
        with _unrecorded(reply):
            held = self._reserve_and_admit(self.answering, parsed, reply)
            if held is not None:
                place, admitted = held
                self._send(place, admitted, reply, reason=SKIPPED_REASON)

    def _admitted(self, parsed: Described | Unusable, reply: Told) -> Admitted | None:
        """A change that sends nothing to Kandev, admitted (None: refused, and told)."""
        if isinstance(parsed, Unusable):
            reply.now(self.refuse_unusable(parsed))
            return None
        admitted = self.admission.admit(parsed.request)
        if isinstance(admitted, Refusal):
            reply.now(Refused(admitted))
            return None
        return admitted

    def claim(self, parsed: Described | Unusable, reply: Told, *, release: bool = False) -> None:
        """ "I'm on it" / "Take over" (or "Release"): admit, change the claim, tell. Nothing
        goes to Kandev, so no lane: the change is one write, made before the ack."""
        with _unrecorded(reply):
            admitted = self._admitted(parsed, reply)
            if admitted is not None:
                change = self.claims.release if release else self.claims.take
                reply.now(change(admitted))

    def snooze(self, parsed: Described | Unusable, reply: Told, *, undo: bool = False) -> None:
        """ "Snooze…" (or "Unsnooze"): admit, change the person's snooze, tell. Nothing goes
        to Kandev: one write, made before the ack."""
        with _unrecorded(reply):
            admitted = self._admitted(parsed, reply)
            if admitted is None:
                return
            if undo:
                reply.now(self.snoozes.unsnooze(admitted))
                return
            result = self.snoozes.snooze(admitted, admitted.request.hours)
            if admitted.request.group and admitted.request.via in ("home", "list"):
                self._snooze_members(admitted)
            reply.now(result)

    def _snooze_members(self, lead: Admitted) -> None:
        """A group row's "Snooze…": the other items of the lead's group, found again now (never
        a list from the payload), each admitted on its own (one the person may not see is
        refused and left out) and snoozed by the same use-case (one write each; a redelivered
        choice changes nothing again)."""
        for member in self.groups.members(lead.card):
            request = replace(lead.request, pending_id=member.pending_id, group=False)
            admitted = self.admission.admit(request)
            if isinstance(admitted, Admitted):
                self.snoozes.snooze(admitted, request.hours)

    def answer(self, request: Request, answers: tuple[Answer, ...], reply: Reply) -> None:
        """An answer whose content the bot kept (a thread reply's Send): reserve, admit,
        record, ack, send, verdict — as a click."""
        with _unrecorded(reply):
            held = self._reserve_and_admit(self.answering, _Described(request), reply)
            if held is not None:
                place, admitted = held
                self._send(place, admitted, reply, answers=answers)

    def admit(self, parsed: Described | Unusable, reply: Told) -> None:
        """A button or shortcut that opens a form: refused, or admitted (the form opens)."""
        if isinstance(parsed, Unusable):
            reply.now(self.refuse_unusable(parsed))
            return
        admitted = self.admission.admit(parsed.request)
        reply.now(Refused(admitted) if isinstance(admitted, Refusal) else admitted)

    def view(self, parsed: Described | Unusable, reply: ViewReply) -> None:
        """A click that opens a view (the Conversation): reserve a reading place, admit, open
        it at once and fill it in the reading lane."""
        held = self._reserve_and_admit(self.reading, parsed, reply)
        if held is None:
            return
        place, admitted = held
        fill = reply.opened(admitted.card)
        if fill is None:
            place.release()
            return
        place.run(fill)

    def _reserve_and_admit(
        self, lane: Lane, parsed: Described | Unusable, reply: Told
    ) -> tuple[Place, Admitted] | None:
        """A place in ``lane`` and the admitted request, or None once the person was told why
        not (unusable, busy, refused: the place is given back)."""
        if isinstance(parsed, Unusable):
            reply.now(self.refuse_unusable(parsed))
            return None
        place = lane.reserve()
        if place is None:
            reply.now(Busy())
            return None
        admitted = self.admission.admit(parsed.request)
        if isinstance(admitted, Refusal):
            place.release()
            reply.now(Refused(admitted))
            return None
        return place, admitted

    def refuse_unusable(self, unusable: Unusable) -> Refused:
        """Audit a payload that could not become a request."""
        return Refused(self.admission.refuse(unusable), unusable)

    # ---- internals -----------------------------------------------------------------------

    def _send(self, place: Place, admitted: Admitted, reply: Reply, **content: Any) -> None:
        """Record the submission (a refusal before it releases the place), acknowledge, and
        send it in the reserved place; its verdict goes to ``reply.later``."""
        try:
            begun = self.answers.begin(admitted, **content)
        except Exception:
            place.release()
            raise
        if isinstance(begun, Verdict):  # refused before anything was recorded or sent
            place.release()
            reply.now(begun)
            return
        # Recorded durably: from here a crash leaves it to crash recovery, never loses it.
        # Urgent until it is sent to Kandev: follow-up work of earlier clicks waits for it.
        urgent = self.urgency.begin() if self.urgency is not None else None
        reply.recorded()
        try:
            job = place.run(self._complete, begun, reply, urgent)
        except BaseException:
            if urgent is not None:
                urgent.done()
            raise
        if urgent is not None:  # a job never run (handed over at a stop) is urgent no more
            job.add_done_callback(lambda _job: urgent.done())

    def _complete(self, begun: Begun, reply: Reply, urgent: Urgent | None = None) -> None:
        try:
            verdict = self.answers.complete(begun, sending=urgent.done if urgent else None)
        except Exception:
            log.exception("answer submission failed")
            return
        finally:
            if urgent is not None:
                urgent.done()
        reply.later(verdict)
        self._offer(begun, verdict, reply)

    def _offer(self, begun: Begun, verdict: Verdict, reply: Reply) -> None:
        """A won answer on a card others ask too: offer to send it to them (never for an
        answer sent to all already) — follow-up work, in the follow-up lane when there is one:
        after the urgent work in flight; a full lane leaves the offer out (counted, logged:
        the answer itself is sent and told, the offer is an ephemeral, never a durable
        write)."""
        attempt = begun.attempt
        if verdict.kind != "won" or verdict.card is None:
            return
        if attempt.action != "answer" or attempt.source == ANSWER_ALL:
            return
        card, user_id = verdict.card, attempt.user_id
        if self.followups is None:
            self._make_offer(card, user_id, reply)
            return
        place = self.followups.reserve()
        if place is None:
            metrics.followup_not_made("offer")
            log.warning(
                "the follow-up lane is full: no offer to answer %s everywhere", card.pending_id
            )
            return
        place.run(self._make_offer, card, user_id, reply)

    def _make_offer(self, card: Card, user_id: str, reply: Reply) -> None:
        if self.urgency is not None:
            self.urgency.wait_quiet(OFFER_YIELD_S, "offer")
        try:
            offer = self.groups.offer(card, user_id)
            if offer is not None:
                reply.offer(offer)
        except Exception:  # the answer is sent and shown; only the offer is lost
            log.exception("could not offer to answer the same question everywhere")

    def _foreign(self, request: Request, card: Card, foreign: ForeignInputs) -> Refusal:
        """A form whose inputs belong to another bundle than the one its metadata names."""
        where = Where(request.user_id, request.channel)
        return self.admission.refuse(
            Unusable(
                "tampered", foreign.detail, request.action, request.source, where, card.pending_id
            )
        )


@dataclass(frozen=True)
class _Described:
    request: Request


@contextmanager
def _unrecorded(reply: Told) -> Iterator[None]:
    """A database that cannot record the interaction (nothing was recorded or sent, the reply
    not given yet) is told as :class:`Unrecorded`, not left unanswered."""
    try:
        yield
    except Exception as exc:
        if not is_unavailable(exc):
            raise
        log.warning("not recorded: the database is unavailable (%s)", type(exc).__name__)
        reply.now(Unrecorded())
