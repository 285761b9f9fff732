"""kandev_slack/slack/listeners/views.py on a real Bolt App: a submitted form is parsed, admitted,
read
(field errors keep it open), recorded, acked at once as "Sending…", sent to Kandev, and how it
ended is shown in the same modal by views.update."""

from __future__ import annotations

import threading
from typing import Any

from slack_bolt import App

from kandev_slack.cards import ids, words
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardState
from kandev_slack.kinds.question.cards.modals import FormPlace
from kandev_slack.kits.fakeslack import BOB, blocks_text
from kandev_slack.slack.parsing.forms import FormKind, form_for
from kandev_slack.store import Database
from tests.kit.factories import ALICE_ID, CHANNEL, KANDEV_URL, answered, make_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway
from tests.unit.slack.slack_bodies import (
    RESPONSE_URL,
    VIEW_ID,
    dispatch,
    eventually,
    submission,
)

MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])
BOB_ID = "U0BOB00002"


def opened(card: Card, kind: FormKind, origin: str = "card") -> dict[str, Any]:
    """The form the card's button opens (as actions.py opens it)."""
    response_url = RESPONSE_URL if origin != "home" else ""
    place = FormPlace(KANDEV_URL, origin=origin, response_url=response_url)  # type: ignore[arg-type]
    return form_for(card, kind, place)


def reason(text: str) -> dict[str, dict[str, Any]]:
    return {ids.BLOCK_REASON: {ids.ACTION_REASON: text}}


def choice(view: dict[str, Any], option_id: str) -> dict[str, dict[str, Any]]:
    [block_id] = [
        b["block_id"] for b in view["blocks"] if b.get("block_id", "").startswith("kq_choice:")
    ]
    return {block_id: {ids.ACTION_CHOICE: option_id}}


def sending(acked: Any, action: str = "reject") -> bool:
    """The ack turned the form into "Sending…" (the submission is recorded)."""
    return (
        acked["response_action"] == "update"
        and acked["view"]["callback_id"] == ids.CALLBACK_RESULT
        and acked["view"]["title"]["text"] == words.sending_title(action)  # type: ignore[arg-type]
    )


def updated_view(gateway: FakeSlackGateway) -> dict[str, Any]:
    """The one views.update of the submitted modal (after the ack)."""
    [update] = eventually(lambda: gateway.called("views.update"))
    assert update["view_id"] == VIEW_ID
    return update["view"]


def test_a_valid_rejection_is_sent_and_the_form_shows_it(
    bolt: App, posted, fake_kandev: FakeKandev, store: Database, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())

    status, acked = dispatch(bolt, submission(opened(card, "reject"), reason("use the old one")))

    assert status == 200 and sending(acked)
    shown = updated_view(gateway)
    assert shown["title"]["text"] == "Rejected"
    assert words.sent_message("reject") in blocks_text(shown["blocks"])
    assert fake_kandev.called("reject")[0]["reason"] == "use the old one"
    assert store.cards.get(card.pending_id).state is CardState.REJECTED  # type: ignore[union-attr]
    assert gateway.called("chat.postEphemeral") == []


def test_the_submission_is_recorded_before_its_ack(
    bolt: App, posted, fake_kandev: FakeKandev, store: Database, monkeypatch
) -> None:
    """Durable as a click: once acked, a crash cannot lose it (crash recovery re-sends it)."""
    card = posted(make_bundle())
    kandev_may_answer = threading.Event()
    reject = fake_kandev.reject
    monkeypatch.setattr(
        fake_kandev, "reject", lambda *a, **k: kandev_may_answer.wait(10) and reject(*a, **k)
    )
    try:
        _, acked = dispatch(bolt, submission(opened(card, "reject"), reason("not now")))

        assert sending(acked)
        [recorded] = store.submissions.unfinished_submissions(older_than_s=0)
        assert (recorded.pending_id, recorded.content.reason) == (card.pending_id, "not now")
    finally:
        kandev_may_answer.set()
    eventually(lambda: store.cards.get(card.pending_id).state is CardState.REJECTED)  # type: ignore[union-attr]


def test_an_answer_form_is_read_and_sent(
    bolt: App, posted, fake_kandev: FakeKandev, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())
    view = opened(card, "answer")

    status, acked = dispatch(bolt, submission(view, choice(view, "q1_opt2")))

    assert status == 200 and sending(acked, "answer")
    assert updated_view(gateway)["title"]["text"] == "Answered"
    assert fake_kandev.called("answer")[0]["answers"] == [MONGO]


def test_a_form_missing_its_answer_keeps_open_with_a_field_error(
    bolt: App, posted, fake_kandev: FakeKandev
) -> None:
    card = posted(make_bundle())

    status, acked = dispatch(bolt, submission(opened(card, "reject"), reason("   ")))

    assert status == 200
    assert acked["response_action"] == "errors"
    assert list(acked["errors"]) == [ids.BLOCK_REASON]
    assert fake_kandev.called("reject") == []


def test_kandevs_refusal_brings_the_form_back_as_filled_with_the_error_under_the_field(
    bolt: App, posted, fake_kandev: FakeKandev, store: Database, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())
    fake_kandev.refuse_next(card.pending_id, "reason too vague")
    form = opened(card, "reject")

    _, acked = dispatch(bolt, submission(form, reason("no")))

    assert sending(acked)
    shown = updated_view(gateway)
    assert (shown["callback_id"], shown["private_metadata"]) == (
        ids.CALLBACK_REJECT,
        form["private_metadata"],
    )
    blocks = shown["blocks"]
    [at] = [i for i, b in enumerate(blocks) if b.get("block_id") == ids.BLOCK_REASON]
    assert blocks[at]["element"]["initial_value"] == "no"
    assert words.invalid_message("reason too vague") in blocks_text([blocks[at + 1]])
    assert store.cards.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]
    assert gateway.called("chat.postEphemeral") == []


def test_kandev_unreachable_brings_the_form_back_saying_nothing_was_recorded(
    bolt: App, posted, fake_kandev: FakeKandev, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())
    fake_kandev.fail("reject", times=1)

    _, acked = dispatch(bolt, submission(opened(card, "reject"), reason("no")))

    assert sending(acked)
    shown = updated_view(gateway)
    assert shown["callback_id"] == ids.CALLBACK_REJECT
    assert words.not_recorded_message(action="reject") in blocks_text(shown["blocks"])


def test_a_result_the_modal_cannot_show_any_more_is_told_where_it_was_opened(
    bolt: App, posted, fake_kandev: FakeKandev, gateway: FakeSlackGateway
) -> None:
    """The person closed "Sending…" before Kandev answered: views.update finds no view."""
    card = posted(make_bundle())
    fake_kandev.refuse_next(card.pending_id, "reason too vague")
    gateway.fail("views.update", "not_found")

    dispatch(bolt, submission(opened(card, "reject"), reason("no")))

    [told] = eventually(lambda: gateway.called("chat.postEphemeral"))
    assert (told["channel"], told["user"]) == (CHANNEL, ALICE_ID)
    assert told["text"] == words.invalid_message("reason too vague")


def test_a_form_with_forged_metadata_is_refused_in_the_form(
    bolt: App, posted, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    view = {**opened(card, "reject"), "private_metadata": "not ours"}

    _, acked = dispatch(bolt, submission(view, reason("no")))

    assert acked == {
        "response_action": "errors",
        "errors": {ids.BLOCK_REASON: words.unusable_message("malformed", form=True)},
    }
    assert fake_kandev.called("reject") == []
    assert store.audit_log.audit_entries(limit=1)[0].result == "malformed"


def test_a_form_on_a_card_resolved_meanwhile_turns_into_the_explanation(
    bolt: App, posted, gateway: FakeSlackGateway, store: Database
) -> None:
    card = posted(make_bundle())
    view = opened(card, "reject")
    assert store.cards.transition(card.pending_id, answered(BOB_ID))

    status, acked = dispatch(bolt, submission(view, reason("no")))

    assert status == 200 and acked["response_action"] == "update"
    assert acked["view"]["callback_id"] == ids.CALLBACK_RESULT
    assert blocks_text(acked["view"]["blocks"]).startswith(f"<@{BOB_ID}> answered first")
    assert gateway.called("chat.postEphemeral") == []
    assert store.audit_log.audit_entries(limit=1)[0].result == "resolved_already"


def test_a_refused_form_from_the_home_tab_turns_into_the_explanation(
    bolt: App, services, fake_kandev: FakeKandev, gateway: FakeSlackGateway, store: Database
) -> None:
    bundle = fake_kandev.add(make_bundle())  # listed, no card yet: no channel to tell Bob in
    card = services.admission.queue.card_for(bundle.pending_id)
    gateway.private_channels[CHANNEL] = frozenset({ALICE_ID})
    view = opened(card, "reject", origin="home")

    _, acked = dispatch(bolt, submission(view, reason("no"), user=BOB))

    assert acked["response_action"] == "update"
    assert acked["view"]["callback_id"] == ids.CALLBACK_RESULT
    assert words.forbidden_message()[:40] in str(acked["view"]["blocks"])
    assert gateway.called("chat.postEphemeral") == []
    assert fake_kandev.called("reject") == []
    assert store.audit_log.audit_entries(limit=1)[0].result == "forbidden"


def test_an_answer_form_without_any_of_the_bundles_inputs_is_tampered(
    bolt: App, posted, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    forged = {**opened(card, "reject"), "callback_id": ids.CALLBACK_ANSWER}

    _, acked = dispatch(bolt, submission(forged, reason("no")))

    assert acked == {
        "response_action": "errors",
        "errors": {ids.BLOCK_REASON: words.tampered_message()},
    }
    assert fake_kandev.called("answer") == []
    [entry] = store.audit_log.audit_entries(limit=1)
    assert (entry.result, entry.pending_id) == ("tampered", card.pending_id)


def test_the_result_form_is_only_acked(bolt: App, gateway: FakeSlackGateway) -> None:
    view = {
        "type": "modal",
        "callback_id": ids.CALLBACK_RESULT,
        "title": {"type": "plain_text", "text": "Not sent"},
        "blocks": [],
    }

    assert dispatch(bolt, submission(view)) == (200, "")
    assert gateway.calls == []


def test_a_redelivered_submission_reaches_kandev_once_and_its_form_still_ends(
    bolt: App, posted, fake_kandev: FakeKandev, gateway: FakeSlackGateway, monkeypatch
) -> None:
    """Slack delivers a submission again when it missed the first ack (here while the first is
    still with Kandev); whichever ack Slack applied, the form does not stay on "Sending…"."""
    card = posted(make_bundle())
    body = submission(opened(card, "reject"), reason("twice"))
    kandev_may_answer = threading.Event()
    reject = fake_kandev.reject
    monkeypatch.setattr(
        fake_kandev, "reject", lambda *a, **k: kandev_may_answer.wait(10) and reject(*a, **k)
    )

    _, first = dispatch(bolt, body)
    _, again = dispatch(bolt, body)
    kandev_may_answer.set()

    assert sending(first) and sending(again)
    shown = eventually(
        lambda: len(gateway.called("views.update")) == 2 and gateway.called("views.update")
    )
    assert {s["view_id"] for s in shown} == {VIEW_ID}
    texts = sorted(blocks_text(s["view"]["blocks"]) for s in shown)
    assert texts == sorted([words.sent_message("reject"), words.already_sent_message()])
    assert len(fake_kandev.called("reject")) == 1


def test_a_form_sent_while_the_answering_lane_is_full_stays_open_saying_busy(
    bolt: App, services, posted, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    places = []
    while (place := services.answering.reserve()) is not None:
        places.append(place)
    try:
        status, acked = dispatch(bolt, submission(opened(card, "reject"), reason("old one")))
    finally:
        for place in places:
            place.release()

    assert status == 200
    assert acked == {
        "response_action": "errors",
        "errors": {ids.BLOCK_REASON: words.busy_message()},
    }
    assert (
        fake_kandev.called("reject") == []
        and store.submissions.submissions_for(card.pending_id) == []
    )
