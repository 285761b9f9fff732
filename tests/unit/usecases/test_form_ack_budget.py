"""A form whose answer is not ready within its ack budget (here: a user group looked up from a
slow Slack) is acked as "Sending…" in time, and the answer — the result, a refusal, or field
errors in the form as the person filled it — follows in the same modal by views.update."""

from __future__ import annotations

import pytest
from slack_bolt import App

from kandev_slack.cards import words
from kandev_slack.config.routing import Routing
from kandev_slack.kinds.question.cards.submissions import MISSING_REASON
from kandev_slack.kits.fakeslack import ALICE, BOB, blocks_text
from kandev_slack.slack.listeners import views
from tests.kit.factories import CHANNEL, make_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway
from tests.unit.slack.slack_bodies import dispatch, submission
from tests.unit.slack.test_listener_views import opened, reason, sending, updated_view

GROUP_ID = "S0ANSWERERS"


@pytest.fixture
def routing() -> Routing:
    """Only members of a user group may answer: each submission looks the group up."""
    return Routing(default_channel=CHANNEL, default_answerers=frozenset({GROUP_ID}))


@pytest.fixture(autouse=True)
def slow_slack(gateway: FakeSlackGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    gateway.groups[GROUP_ID] = frozenset({ALICE.id})
    gateway.slow("usergroups.users.list", 0.5)
    monkeypatch.setattr(views, "ACK_BUDGET_S", 0.1)


def test_a_late_submission_is_acked_sending_and_shows_its_result(
    bolt: App, posted, fake_kandev: FakeKandev, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())

    status, acked = dispatch(bolt, submission(opened(card, "reject"), reason("not now")))

    assert status == 200 and sending(acked)
    shown = updated_view(gateway)
    assert shown["title"]["text"] == "Rejected"
    assert len(fake_kandev.called("reject")) == 1


def test_a_late_refusal_replaces_the_sending_modal(
    bolt: App, posted, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())

    status, acked = dispatch(bolt, submission(opened(card, "reject"), reason("no"), user=BOB))

    assert status == 200 and sending(acked)
    shown = updated_view(gateway)
    assert shown["title"]["text"] == "Not sent"
    assert words.forbidden_message()[:40] in blocks_text(shown["blocks"])


def test_late_field_errors_show_the_form_again_as_filled(
    bolt: App, posted, fake_kandev: FakeKandev, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())
    form = opened(card, "reject")

    status, acked = dispatch(bolt, submission(form, reason("   ")))  # no reason: a field error

    assert status == 200 and sending(acked)
    shown = updated_view(gateway)
    assert shown["callback_id"] == form["callback_id"]  # the form again, to be sent again
    assert shown["private_metadata"] == form["private_metadata"]
    assert MISSING_REASON in blocks_text(shown["blocks"])
    assert fake_kandev.called("reject") == []


def test_in_time_the_answer_is_the_ack_and_nothing_follows(
    bolt: App, posted, gateway: FakeSlackGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "ACK_BUDGET_S", 5.0)
    card = posted(make_bundle())

    status, acked = dispatch(bolt, submission(opened(card, "reject"), reason("   ")))

    assert status == 200 and acked["response_action"] == "errors"
    assert gateway.called("views.update") == []
