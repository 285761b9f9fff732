"""Interactions: one pipeline for a click and a form submission, on the real admission, answers
and store, with fakes only at the edges (Kandev; the reply records what the interaction was
answered with). Each ends in one typed result, never a sentence."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardState
from kandev_slack.slack.transport.lanes import Lane
from kandev_slack.store import Database
from kandev_slack.usecases.answering.admission import Admission, Admitted, Request, Unusable, Where
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.claims import Claims
from kandev_slack.usecases.answering.groups import Groups
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
from tests.kit.factories import ALICE_ID, make_bundle
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
    """The pipeline on the fixtures' parts: ``pipeline(admission, answers, lanes, read)``."""

    def make(admission: Admission, answers: AnswerService, lanes, read=None) -> Interactions:
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
