"""Crash recovery of answers, one Kandev reply at a time (real store, answer service and fake
Slack; Kandev's wire replies scripted with httpx.MockTransport).

A submission a dead process left unfinished is re-sent; Kandev's reply decides: our own first
attempt won ("lost" to exactly our answer) → the card shows the clicker; someone else won →
the card shows the winner and the clicker is told theirs was not sent; no longer active →
ended; Kandev unreachable → left for the next cycle. Live and young submissions are left alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from kandev_slack.config.routing import Routing
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import CardState, NewCard
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevUnavailable
from kandev_slack.kinds.question.cards.modals import build_sending_modal
from kandev_slack.kits.fakeslack import ALICE, FakeSlack
from kandev_slack.ops.health import Health
from kandev_slack.slack.presenters.tell import RecoveryAnnouncer
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.recovery import Recovery
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.leases import InFlight
from kandev_slack.wiring import build_publisher
from tests.kit.factories import DB_QUESTION, make_bundle, make_task

CHANNEL = "C0QUESTION"
PENDING = "p-1"
MONGO = {"question_id": "db", "selected_options": ["q1_opt2"], "custom_text": ""}
POSTGRES = {"question_id": "db", "selected_options": ["q1_opt1"], "custom_text": ""}
Reply = Callable[[httpx.Request], httpx.Response]


def won_by(answer: dict, claimed: bool) -> Reply:
    """Kandev's reply: ``answer`` won, recorded when the reply is made (after the submission
    was first sent, as a first attempt's win is)."""

    def reply(request: httpx.Request) -> httpx.Response:
        body = {
            "success": True,
            "claimed": claimed,
            "status": "answered",
            "response": {
                "pending_id": PENDING,
                "answers": [answer],
                "rejected": False,
                "reject_reason": "",
                "responded_at": datetime.now(UTC).isoformat(),
            },
        }
        return httpx.Response(200, json=body)

    return reply


class World:
    def __init__(self, tmp_path: Path, fake: FakeSlack) -> None:
        self.reply: Reply = won_by(MONGO, True)
        self.sent: list[dict] = []
        self.store = Database(f"sqlite:///{tmp_path / 'bot.db'}")
        self.kandev = KandevClient(
            "http://kandev.test", retry_attempts=1, transport=httpx.MockTransport(self._kandev)
        )
        slack = SlackGateway(make_web_client(fake.workspace.bot_token, fake.api_url))
        health = Health()
        publisher = build_publisher(
            self.store.outbox,
            self.store.cards,
            self.store.audit_log,
            slack,
            kandev_url="https://k.test",
            health=health,
        )
        self.in_flight = InFlight()
        answerers = Answerers(Routing(default_channel=CHANNEL), slack)
        identities = Identities(
            bot=self.kandev,
            links=self.store.links,
            answerers=answerers,
            client_for=lambda token: KandevClient(self.kandev.base_url, token),
        )
        answers = AnswerService(
            self.kandev,
            self.store.cards,
            self.store.submissions,
            self.store.audit_log,
            publisher,
            self.in_flight,
            identities,
        )
        self.recovery = Recovery(
            self.kandev,
            self.store.cards,
            self.store.submissions,
            self.store.audit_log,
            answers,
            answerers,
            RecoveryAnnouncer(Notifier(slack)),
            self.in_flight,
            stale_after_s=0,
        )
        self.fake = fake
        self.slack = slack

    def sending_modal(self) -> str:
        """A modal the person submitted, left on "Sending…" by the process that died."""
        trigger = self.fake.issue_trigger(ALICE.id)
        return self.slack.open_view(trigger, build_sending_modal("answer"))

    def _kandev(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == f"/api/v1/clarification/{PENDING}/respond", request.url
        self.sent.append(json.loads(request.content))
        return self.reply(request)

    def card(self) -> None:
        bundle = make_bundle(DB_QUESTION, pending_id=PENDING, task_id="t-1")
        self.store.cards.record_card(NewCard(bundle, make_task("t-1"), CHANNEL))
        self.store.cards.mark_posted(PENDING, CHANNEL, "1700000000.000100")

    def orphan(self, key: str = "k-1", answer: dict = MONGO, view_id: str = "") -> str:
        """A submission as AnswerService.submit records it before calling Kandev."""
        content = SubmissionContent(
            action="answer", answers=[Answer.model_validate(answer)], view_id=view_id
        )
        assert self.store.submissions.begin_submission(PENDING, key, ALICE.id, content)
        return key

    def told(self) -> list[str]:
        return [e.all_text for e in self.fake.ephemerals(user=ALICE.id, channel=CHANNEL)]


@pytest.fixture
def world(tmp_path: Path, fake_slack: FakeSlack) -> Iterator[World]:
    w = World(tmp_path, fake_slack)
    w.card()
    yield w
    w.kandev.close()
    w.store.close()


def test_our_first_attempt_won_so_the_card_shows_the_clicker(world: World) -> None:
    world.reply = won_by(MONGO, claimed=False)  # the retry lost to... our own first attempt
    key = world.orphan()
    report = world.recovery.run_once()

    assert report.recovered == [(PENDING, "won")]
    assert world.sent == [{"answers": [MONGO], "rejected": False, "reject_reason": ""}]
    card = world.store.cards.get(PENDING)
    assert card.state is CardState.ANSWERED
    assert (card.outcome.via, card.outcome.by_user) == ("slack", ALICE.id)
    assert world.store.submissions.get_submission(key).finished
    assert world.store.outbox.outbox_pending_count() == 1  # the card's edit
    assert any("recorded" in t for t in world.told())
    entry = world.store.audit_log.audit_entries(PENDING)[0]
    assert (entry.user, entry.source, entry.result) == (ALICE.id, "recovery", "won")


def test_someone_else_won_so_the_clicker_hears_theirs_was_not_sent(world: World) -> None:
    world.reply = won_by(POSTGRES, claimed=False)
    world.orphan()
    assert world.recovery.run_once().recovered == [(PENDING, "lost")]
    card = world.store.cards.get(PENDING)
    assert card.state is CardState.ANSWERED and card.outcome.by_user is None
    assert [a.selected_options for a in card.outcome.answers] == [["q1_opt1"]]
    assert any("PostgreSQL" in t for t in world.told()), world.told()


def test_a_bundle_no_longer_active_ends_the_card(world: World) -> None:
    world.reply = lambda r: httpx.Response(
        409, json={"code": "not_active", "error": "clarification request is no longer active"}
    )
    world.orphan()
    assert world.recovery.run_once().recovered == [(PENDING, "ended")]
    assert world.store.cards.get(PENDING).state is CardState.ENDED


def test_kandev_unreachable_leaves_it_for_the_next_cycle(world: World) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    world.reply = refuse
    key = world.orphan()
    with pytest.raises(KandevUnavailable):
        world.recovery.run_once()
    assert not world.store.submissions.get_submission(key).finished
    assert world.store.cards.get(PENDING).state is CardState.PENDING
    assert world.told() == []

    world.reply = won_by(MONGO, claimed=True)
    assert world.recovery.run_once().recovered == [(PENDING, "won")]


def test_live_and_young_submissions_are_left_alone(world: World) -> None:
    world.reply = won_by(MONGO, claimed=False)
    live = world.orphan("live")
    world.orphan("young", POSTGRES)
    world.recovery.stale_after_s = 30  # "young" was leased just now
    assert world.recovery.run_once().recovered == []
    world.recovery.stale_after_s = 0
    with world.in_flight.hold(live):
        report = world.recovery.run_once()
    assert world.sent == [{"answers": [POSTGRES], "rejected": False, "reject_reason": ""}]
    assert report.recovered == [(PENDING, "lost")]  # "young" re-sent; Kandev says MONGO won
    assert not world.store.submissions.get_submission(live).finished


def test_a_submission_for_an_unknown_card_is_closed(world: World) -> None:
    content = SubmissionContent(action="reject", reason="no")
    world.store.submissions.begin_submission("p-unknown", "k-x", ALICE.id, content)
    assert world.recovery.run_once().recovered == []
    assert world.store.submissions.get_submission("k-x").finished
    assert world.sent == []


def test_a_modal_left_on_sending_shows_how_its_answer_ended(world: World) -> None:
    view_id = world.sending_modal()
    assert "Sending" in world.fake.view(view_id).all_text
    world.reply = won_by(MONGO, claimed=False)  # our own first attempt won
    world.orphan(view_id=view_id)

    world.recovery.run_once()

    shown = world.fake.view(view_id).all_text
    assert "Sending" not in shown and "Sent" in shown and "the agent has your answer" in shown


def test_a_modal_left_on_sending_shows_that_someone_else_won(world: World) -> None:
    view_id = world.sending_modal()
    world.reply = won_by(POSTGRES, claimed=False)  # another answer won first
    world.orphan(view_id=view_id)

    world.recovery.run_once()

    shown = world.fake.view(view_id).all_text
    assert "Sending" not in shown and "Not sent" in shown and "PostgreSQL" in shown


def rejected_at(at: datetime) -> Reply:
    """Kandev's reply to a re-sent rejection: someone's rejection won, recorded ``at``."""
    body = {
        "success": True,
        "claimed": False,
        "status": "rejected",
        "response": {
            "pending_id": PENDING,
            "answers": [],
            "rejected": True,
            "reject_reason": "",
            "responded_at": at.isoformat(),
        },
    }
    return lambda request: httpx.Response(200, json=body)


@pytest.mark.fault("crash recovery re-sends a rejection another made first", guarantee=7)
def test_a_resent_rejection_is_not_credited_with_one_recorded_before_it_was_sent(
    world: World, reliability
) -> None:
    """Someone rejected in Kandev before Alice's rejection was first sent; her process died
    while sending it and the re-send learns ``claimed:false``, rejected: not hers."""
    before = datetime.now(UTC) - timedelta(seconds=5)
    world.reply = rejected_at(before)
    view_id = world.sending_modal()
    content = SubmissionContent(action="reject", reason="use the old one", view_id=view_id)
    assert world.store.submissions.begin_submission(PENDING, "k-r", ALICE.id, content)

    report = world.recovery.run_once()

    card = world.store.cards.get(PENDING)
    entry = world.store.audit_log.audit_entries(PENDING)[0]
    shown = world.fake.view(view_id).all_text
    survived = (
        report.recovered == [(PENDING, "lost")]
        and card.state is CardState.REJECTED
        and (card.outcome.via, card.outcome.by_user, card.outcome.reason) == ("kandev", None, "")
        and entry.result == "lost"
        and "with your reason" not in shown
    )
    reliability.record(
        "crash recovery's re-sent rejection lost to an earlier one", survived=survived
    )
    assert report.recovered == [(PENDING, "lost")]
    assert card.state is CardState.REJECTED
    assert (card.outcome.via, card.outcome.by_user, card.outcome.reason) == ("kandev", None, "")
    assert (entry.user, entry.source, entry.result) == (ALICE.id, "recovery", "lost")
    assert "Not sent" in shown and "Rejected in Kandev first" in shown, shown
    assert "with your reason" not in shown
