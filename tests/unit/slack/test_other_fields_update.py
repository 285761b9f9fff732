"""A pick in the answer form (block_actions from a modal): the form to show, or nothing."""

from __future__ import annotations

from kandev_slack.cards.ids import CALLBACK_ANSWER
from kandev_slack.kinds.question.cards.modals import FormPlace, build_answer_modal
from kandev_slack.slack.parsing.forms import other_fields_update
from tests.kit.factories import DB_QUESTION, KANDEV_URL, make_bundle, make_task

WHERE = FormPlace(kandev_url=KANDEV_URL, channel="C0123", ts="1764488872.000100")


def _body(view: dict, values: dict) -> dict:
    return {
        "type": "block_actions",
        "view": {**view, "id": "V1", "hash": "h1", "state": {"values": values}},
    }


def _other(block_id: str, value: str) -> dict:
    picked = {"value": value, "text": {"type": "plain_text", "text": "x"}}
    return {block_id: {"kq_choice": {"type": "radio_buttons", "selected_option": picked}}}


def test_other_picked_shows_its_field_and_another_pick_changes_nothing():
    bundle = make_bundle(DB_QUESTION)
    form = build_answer_modal(bundle, make_task(), WHERE)
    update = other_fields_update(_body(form, _other("kq_choice:0:db", "#other")))
    assert update is not None
    view_id, view = update
    assert view_id == "V1" and view["callback_id"] == CALLBACK_ANSWER
    assert "kq_text:0:db" in {b.get("block_id") for b in view["blocks"]}
    assert other_fields_update(_body(form, _other("kq_choice:0:db", "q1_opt1"))) is None


def test_not_an_answer_form_is_left_alone():
    assert other_fields_update({"type": "block_actions"}) is None
    other_view = {"callback_id": "kq_reject_modal", "blocks": []}
    assert other_fields_update(_body(other_view, _other("kq_choice:0:db", "#other"))) is None
