"""bot/slack/listeners/views.py on a real Bolt App: a submitted form is parsed, admitted, read
(field errors keep it open), submitted to Kandev within the ack budget, and told."""

from __future__ import annotations

from typing import Any

from slack_bolt import App

from bot.cards import ids, messages
from bot.domain import Card, CardState
from bot.kandev.models import Answer
from bot.slack.forms import FormKind, form_for
from bot.store import Store
from tests.factories import ALICE_ID, CHANNEL, KANDEV_URL, answered, make_bundle
from tests.fakes import FakeKandev, FakeSlackGateway
from tests.fakeslack import BOB
from tests.usecases.slack_bodies import RESPONSE_URL, dispatch, eventually, submission

MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])
BOB_ID = "U0BOB00002"


def opened(card: Card, kind: FormKind, origin: str = "card") -> dict[str, Any]:
    """The form the card's button opens (as actions.py opens it)."""
    return form_for(
        card,
        kind,
        kandev_url=KANDEV_URL,
        origin=origin,  # type: ignore[arg-type]
        response_url=RESPONSE_URL if origin != "home" else "",
    )


def reason(text: str) -> dict[str, dict[str, Any]]:
    return {ids.BLOCK_REASON: {ids.ACTION_REASON: text}}


def choice(view: dict[str, Any], option_id: str) -> dict[str, dict[str, Any]]:
    [block_id] = [
        b["block_id"] for b in view["blocks"] if b.get("block_id", "").startswith("kq_choice:")
    ]
    return {block_id: {ids.ACTION_CHOICE: option_id}}


def test_a_valid_rejection_is_sent_and_the_form_closes(
    bolt: App, posted, fake_kandev: FakeKandev, store: Store, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())

    status, acked = dispatch(bolt, submission(opened(card, "reject"), reason("use the old one")))

    assert (status, acked) == (200, "")
    assert fake_kandev.called("reject")[0]["reason"] == "use the old one"
    assert store.get(card.pending_id).state is CardState.REJECTED  # type: ignore[union-attr]
    assert gateway.called("chat.postEphemeral") == []


def test_an_answer_form_is_read_and_sent(bolt: App, posted, fake_kandev: FakeKandev) -> None:
    card = posted(make_bundle())
    view = opened(card, "answer")

    status, acked = dispatch(bolt, submission(view, choice(view, "q1_opt2")))

    assert (status, acked) == (200, "")
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


def test_kandevs_refusal_keeps_the_form_open_on_its_last_input(
    bolt: App, posted, fake_kandev: FakeKandev, store: Store
) -> None:
    card = posted(make_bundle())
    fake_kandev.refuse_next(card.pending_id, "reason too vague")

    _, acked = dispatch(bolt, submission(opened(card, "reject"), reason("no")))

    assert acked == {
        "response_action": "errors",
        "errors": {
            ids.BLOCK_REASON: messages.invalid_message("reason too vague"),
        },
    }
    assert store.get(card.pending_id).state is CardState.PENDING  # type: ignore[union-attr]


def test_kandev_unreachable_keeps_the_form_open_and_says_nothing_was_recorded(
    bolt: App, posted, fake_kandev: FakeKandev
) -> None:
    card = posted(make_bundle())
    fake_kandev.fail("reject", times=1)

    _, acked = dispatch(bolt, submission(opened(card, "reject"), reason("no")))

    assert acked["response_action"] == "errors"
    assert acked["errors"][ids.BLOCK_REASON] == messages.not_recorded_message(action="reject")


def test_a_form_with_forged_metadata_is_refused_in_the_form(
    bolt: App, posted, fake_kandev: FakeKandev, store: Store
) -> None:
    card = posted(make_bundle())
    view = {**opened(card, "reject"), "private_metadata": "not ours"}

    _, acked = dispatch(bolt, submission(view, reason("no")))

    assert acked == {
        "response_action": "errors",
        "errors": {ids.BLOCK_REASON: messages.unusable_message("malformed", form=True)},
    }
    assert fake_kandev.called("reject") == []
    assert store.audit_entries(limit=1)[0].result == "malformed"


def test_a_form_on_a_card_resolved_meanwhile_closes_and_tells_in_the_channel(
    bolt: App, posted, gateway: FakeSlackGateway, store: Store
) -> None:
    card = posted(make_bundle())
    view = opened(card, "reject")
    assert store.transition(card.pending_id, answered(BOB_ID))

    status, acked = dispatch(bolt, submission(view, reason("no")))

    assert (status, acked) == (200, "")
    [told] = eventually(lambda: gateway.called("chat.postEphemeral"))
    assert (told["channel"], told["user"]) == (CHANNEL, ALICE_ID)
    assert told["text"].startswith(f"<@{BOB_ID}> answered first")
    assert store.audit_entries(limit=1)[0].result == "resolved_already"


def test_a_refused_form_from_the_home_tab_turns_into_the_explanation(
    bolt: App, services, fake_kandev: FakeKandev, gateway: FakeSlackGateway, store: Store
) -> None:
    bundle = fake_kandev.add(make_bundle())  # listed, no card yet: no channel to tell Bob in
    card = services.admission.queue.card_for(bundle.pending_id)
    gateway.private_channels[CHANNEL] = frozenset({ALICE_ID})
    view = opened(card, "reject", origin="home")

    _, acked = dispatch(bolt, submission(view, reason("no"), user=BOB))

    assert acked["response_action"] == "update"
    assert acked["view"]["callback_id"] == ids.CALLBACK_RESULT
    assert messages.forbidden_message()[:40] in str(acked["view"]["blocks"])
    assert gateway.called("chat.postEphemeral") == []
    assert fake_kandev.called("reject") == []
    assert store.audit_entries(limit=1)[0].result == "forbidden"


def test_an_answer_form_without_any_of_the_bundles_inputs_is_tampered(
    bolt: App, posted, fake_kandev: FakeKandev, store: Store
) -> None:
    card = posted(make_bundle())
    forged = {**opened(card, "reject"), "callback_id": ids.CALLBACK_ANSWER}

    _, acked = dispatch(bolt, submission(forged, reason("no")))

    assert acked == {
        "response_action": "errors",
        "errors": {ids.BLOCK_REASON: messages.tampered_message()},
    }
    assert fake_kandev.called("answer") == []
    [entry] = store.audit_entries(limit=1)
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
