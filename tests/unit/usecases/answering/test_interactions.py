"""Interactions: one pipeline for a click and a form submission, on the real admission, answers
and store, with fakes only at the edges (Kandev; the reply records what the interaction was
answered with). Each ends in one typed result, never a sentence."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardState
from kandev_slack.ops import metrics
from kandev_slack.ops.urgency import Urgency
from kandev_slack.slack.transport.lanes import Lane
from kandev_slack.store import Database
from kandev_slack.usecases.answering.admission import Admission, Admitted, Request, Unusable, Where
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.claims import Claims
from kandev_slack.usecases.answering.groups import Groups, Offer
from kandev_slack.usecases.answering.interactions import (
    Busy,
    Content,
    FieldErrors,
    ForeignInputs,
    Interactions,
    Refused,
    Result,
    Unrecorded,
)
from kandev_slack.usecases.answering.snooze import Snoozes
from kandev_slack.usecases.answering.verdicts import Verdict
from tests.kit.factories import ALICE_ID, ASKED_AT, make_bundle, numbered_bundle
from tests.kit.fakes import FakeKandev

MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])


@dataclass
class Recorded:
    """A Reply that keeps what the interaction was answered with, in order."""

    events: list[tuple[str, Result | None]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def now(self, result: Result) -> None:
        self.events.append(("now", result))
        self.done.set()

    def recorded(self) -> None:
        self.events.append(("recorded", None))

    def later(self, verdict: Verdict) -> None:
        self.events.append(("later", verdict))
        self.done.set()

    def finished(self) -> list[tuple[str, Result | None]]:
        assert self.done.wait(5), self.events
        return self.events


@dataclass(frozen=True)
class Clicked:
    request: Request


@dataclass(frozen=True)
class Submitted:
    request: Request
    values: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    view_id: str = "V1"


def reads(content: Content | FieldErrors | ForeignInputs):
    return lambda card, action, values: content


@pytest.fixture
def lanes():
    made = [Lane("answering", workers=1, waiting=0), Lane("reading", workers=1, waiting=0)]
    yield made
    for lane in made:
        lane.shutdown()


@pytest.fixture
def pipeline(store: Database):
    """The pipeline on the fixtures' parts: ``pipeline(admission, answers, lanes, read)``
    (``urgency``, ``followups``: the urgent work counted, the follow-up lane)."""

    def make(
        admission: Admission,
        answers: AnswerService,
        lanes,
        read=None,
        *,
        urgency: Urgency | None = None,
        followups: Lane | None = None,
    ) -> Interactions:
        claims = Claims(
            store.claims,
            store.cards,
            store.audit_log,
            admission.answerers.claim_for,
            lambda: None,
        )
        snoozes = Snoozes(store.snoozes, store.cards, store.audit_log, lambda: None, lambda: None)
        groups = Groups(store.cards, store.audit_log)
        return Interactions(
            admission,
            answers,
            lanes[0],
            lanes[1],
            read or reads(Content()),
            claims,
            snoozes,
            groups,
            urgency=urgency,
            followups=followups,
        )

    return make


def on_card(card: Card, **changes: Any) -> Request:
    fields: dict[str, Any] = {
        "user_id": ALICE_ID,
        "action": "answer",
        "source": "slack:button",
        "via": "card",
        "pending_id": card.pending_id,
        "channel": card.channel,
        "ts": card.ts,
        "option": ("q1", "q1_opt2"),
    }
    return Request(**(fields | changes))


def from_form(card: Card, action: str = "answer") -> Request:
    return on_card(
        card, action=action, source="slack:modal:card", option=None, form=True, detail="m"
    )


def test_a_click_is_recorded_then_acknowledged_then_sent_and_its_verdict_follows(
    pipeline, posted, admission, answers, lanes, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    reply = Recorded()

    pipeline(admission, answers, lanes).click(Clicked(on_card(card)), reply)

    [(first, _), (second, verdict)] = reply.finished()
    assert (first, second) == ("recorded", "later")
    assert isinstance(verdict, Verdict) and verdict.kind == "won"
    assert [c["answers"] for c in fake_kandev.called("answer")] == [[MONGO]]
    assert store.cards.get(card.pending_id).state is CardState.ANSWERED  # type: ignore[union-attr]


@dataclass
class Watched(Recorded):
    """A Recorded reply that also notes the urgent work in flight at each step, and offers."""

    urgency: Urgency = field(default_factory=Urgency)
    urgent_at: dict[str, int] = field(default_factory=dict)
    offers: list[Offer] = field(default_factory=list)
    offered: threading.Event = field(default_factory=threading.Event)

    def recorded(self) -> None:
        self.urgent_at["recorded"] = self.urgency.in_flight
        super().recorded()

    def later(self, verdict: Verdict) -> None:
        self.urgent_at["later"] = self.urgency.in_flight
        super().later(verdict)

    def offer(self, offer: Offer) -> None:
        self.events.append(("offer", None))
        self.offers.append(offer)
        self.offered.set()


def test_an_answer_is_urgent_from_its_record_until_it_is_sent(
    pipeline, posted, admission, answers, lanes, fake_kandev: FakeKandev
) -> None:
    """Follow-up work waits for an answer recorded but not yet sent to Kandev (its ack went
    first): urgent when it is acknowledged, no more once Kandev has it."""
    card = posted(make_bundle())
    reply = Watched()
    pipeline(admission, answers, lanes, urgency=reply.urgency).click(Clicked(on_card(card)), reply)
    [(_, _), (_, verdict)] = reply.finished()
    assert isinstance(verdict, Verdict) and verdict.kind == "won"
    assert reply.urgent_at == {"recorded": 1, "later": 0}
    assert reply.urgency.in_flight == 0


def test_an_answer_handed_over_unsent_is_urgent_no_more(
    pipeline, posted, admission, answers, store: Database
) -> None:
    """A stop hands over the answers not started yet (crash recovery sends them): they no
    longer hold follow-up work back."""
    card = posted(make_bundle())
    answering = Lane("answering", workers=1, waiting=1)
    reading = Lane("reading", workers=1, waiting=0)
    busy = threading.Event()
    answering.reserve().run(busy.wait, 5)  # type: ignore[union-attr]  # the one worker, busy
    reply = Watched()
    try:
        pipeline(admission, answers, [answering, reading], urgency=reply.urgency).click(
            Clicked(on_card(card)), reply
        )
        assert reply.urgent_at == {"recorded": 1}
        answering.shutdown(wait=False, cancel=True)
        assert reply.urgency.in_flight == 0
    finally:
        busy.set()
        reading.shutdown()
    assert store.submissions.unfinished_submissions() != []  # left to crash recovery


def _same_two(posted) -> tuple[Card, Card]:
    first, second = (
        posted(numbered_bundle(n, created_at=ASKED_AT + timedelta(seconds=n))) for n in (1, 2)
    )
    return first, second


def test_the_send_to_all_offer_follows_the_verdict_in_the_follow_up_lane(
    pipeline, posted, admission, answers, lanes
) -> None:
    first, second = _same_two(posted)
    followups = Lane("followups", workers=1, waiting=4)
    reply = Watched()
    try:
        pipeline(admission, answers, lanes, urgency=reply.urgency, followups=followups).click(
            Clicked(on_card(first)), reply
        )
        assert reply.offered.wait(5), reply.events
    finally:
        followups.shutdown()
    assert [event for event, _ in reply.events] == ["recorded", "later", "offer"]
    assert list(reply.offers[0].members) == [second.pending_id]


def test_a_full_follow_up_lane_leaves_the_offer_out_counted_the_answer_told(
    pipeline, posted, admission, answers, lanes
) -> None:
    first, _second = _same_two(posted)
    followups = Lane("followups", workers=1, waiting=0)
    held = followups.reserve()  # the one place there is
    assert held is not None
    before = metrics.FOLLOWUPS_NOT_MADE.labels("offer")._value.get()
    reply = Watched()
    try:
        pipeline(admission, answers, lanes, followups=followups).click(
            Clicked(on_card(first)), reply
        )
        [(_, _), (_, verdict)] = reply.finished()
    finally:
        held.release()
        followups.shutdown()
    assert isinstance(verdict, Verdict) and verdict.kind == "won"
    assert not reply.offered.wait(0.5) and reply.offers == []
    assert metrics.FOLLOWUPS_NOT_MADE.labels("offer")._value.get() == before + 1


def test_a_full_lane_is_busy_and_records_nothing(
    pipeline, posted, admission, answers, lanes, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    held = lanes[0].reserve()  # the one place there is
    assert held is not None
    reply = Recorded()

    pipeline(admission, answers, lanes).click(Clicked(on_card(card)), reply)

    assert reply.finished() == [("now", Busy())]
    assert (
        fake_kandev.called("answer") == []
        and store.submissions.submissions_for(card.pending_id) == []
    )
    held.release()


def test_a_database_that_cannot_record_is_said_and_nothing_is_sent(
    pipeline, posted, admission, answers, lanes, fake_kandev: FakeKandev, store: Database
) -> None:
    """The store's SQLite file deleted under it: the click and the form are answered
    "not recorded" (the form stays open), nothing reaches Kandev, the places are given back."""
    card = posted(make_bundle())
    assert store.file is not None
    for path in store.file.path.parent.glob(store.file.path.name + "*"):
        path.unlink()
    interactions = pipeline(admission, answers, lanes, reads(Content(answers=(MONGO,))))

    clicked, submitted = Recorded(), Recorded()
    interactions.click(Clicked(on_card(card)), clicked)
    interactions.submit(Submitted(from_form(card)), submitted)

    assert clicked.finished() == [("now", Unrecorded())]
    assert submitted.finished() == [("now", Unrecorded())]
    assert fake_kandev.called("answer") == []
    place = lanes[0].reserve()
    assert place is not None
    place.release()


def test_a_refused_click_gives_its_place_back(pipeline, posted, admission, answers, lanes) -> None:
    card = posted(make_bundle())
    reply = Recorded()

    pipeline(admission, answers, lanes).click(Clicked(on_card(card, pending_id="other")), reply)

    [(when, result)] = reply.finished()
    assert when == "now" and isinstance(result, Refused)
    assert (result.refusal.kind, result.unusable) == ("tampered", None)
    assert lanes[0].reserve() is not None  # released


def test_an_unusable_payload_is_refused_and_audited(
    pipeline, admission, answers, lanes, store
) -> None:
    unusable = Unusable("malformed", "no view", "answer", "slack:modal", Where(ALICE_ID))
    reply = Recorded()

    pipeline(admission, answers, lanes).submit(unusable, reply)

    [(_, result)] = reply.finished()
    assert isinstance(result, Refused) and result.unusable == unusable
    assert result.refusal.kind == "malformed"
    assert store.audit_log.audit_entries(limit=1)[0].result == "malformed"


def test_a_form_with_field_errors_stays_open_and_records_nothing(
    pipeline, posted, admission, answers, lanes, store
) -> None:
    card = posted(make_bundle())
    errors = FieldErrors({"reason": "Say why."})
    reply = Recorded()

    pipeline(admission, answers, lanes, reads(errors)).submit(Submitted(from_form(card)), reply)

    assert reply.finished() == [("now", errors)]
    assert store.submissions.submissions_for(card.pending_id) == []


def test_a_form_with_another_bundles_inputs_is_refused_as_tampered(
    pipeline, posted, admission, answers, lanes
) -> None:
    card = posted(make_bundle())
    read = reads(ForeignInputs("q9 is not in this bundle"))
    reply = Recorded()

    pipeline(admission, answers, lanes, read).submit(Submitted(from_form(card)), reply)

    [(_, result)] = reply.finished()
    assert isinstance(result, Refused) and result.refusal.kind == "tampered"


def test_a_submission_kandev_would_refuse_is_a_verdict_before_anything_is_recorded(
    pipeline, posted, admission, answers, lanes, fake_kandev: FakeKandev, store
) -> None:
    card = posted(make_bundle())
    read = reads(Content(answers=(Answer(question_id="q1"),)))  # no option, no text
    reply = Recorded()

    pipeline(admission, answers, lanes, read).submit(Submitted(from_form(card)), reply)

    [(when, verdict)] = reply.finished()
    assert when == "now" and isinstance(verdict, Verdict) and verdict.kind == "invalid"
    assert verdict.problem is not None and verdict.problem.found == "unanswered"
    assert fake_kandev.called("answer") == [] and lanes[0].reserve() is not None


def test_a_submitted_form_records_its_view_and_reports_kandev_unreachable_later(
    pipeline, posted, admission, answers, lanes, fake_kandev: FakeKandev, store
) -> None:
    card = posted(make_bundle())
    fake_kandev.fail("answer", times=1)
    reply = Recorded()

    pipeline(admission, answers, lanes, reads(Content(answers=(MONGO,)))).submit(
        Submitted(from_form(card)), reply
    )

    [(first, _), (_, verdict)] = reply.finished()
    assert first == "recorded"
    assert isinstance(verdict, Verdict) and verdict.kind == "not_recorded"
    assert (verdict.cause, verdict.action) == ("unreachable", "answer")


def test_a_form_opener_is_admitted_with_its_card(
    pipeline, posted, admission, answers, lanes
) -> None:
    card = posted(make_bundle())
    reply = Recorded()

    pipeline(admission, answers, lanes).admit(Clicked(on_card(card, option=None)), reply)

    [(_, result)] = reply.finished()
    assert isinstance(result, Admitted) and result.card.pending_id == card.pending_id


@dataclass
class Viewing(Recorded):
    filled: threading.Event = field(default_factory=threading.Event)
    can_open: bool = True

    def opened(self, card: Card):
        self.events.append(("opened", None))
        self.done.set()
        return self.filled.set if self.can_open else None


def test_a_view_opens_at_once_and_is_filled_in_the_reading_lane(
    pipeline, posted, admission, answers, lanes
) -> None:
    card = posted(make_bundle())
    reply = Viewing()

    pipeline(admission, answers, lanes).view(Clicked(on_card(card, action="view")), reply)

    assert reply.finished() == [("opened", None)]
    assert reply.filled.wait(5)


def test_a_view_that_cannot_open_gives_its_reading_place_back(
    pipeline, posted, admission, answers, lanes
) -> None:
    card = posted(make_bundle())
    reply = Viewing(can_open=False)

    pipeline(admission, answers, lanes).view(Clicked(on_card(card, action="view")), reply)

    assert reply.finished() == [("opened", None)]
    assert lanes[1].reserve() is not None
