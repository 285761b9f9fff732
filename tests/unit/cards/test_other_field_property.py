"""Property: the answer form has no text box under a question unless its "Other…" is picked
(one path to own words), and stays a valid view however the person picks."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_slack.cards.ids import ACTION_TEXT, OTHER_VALUE, choice_block_id, text_block_id
from kandev_slack.kinds.question.cards.modals import (
    FormPlace,
    build_answer_modal,
    refill_form,
    with_other_fields,
)
from tests.kit.factories import KANDEV_URL
from tests.unit.cards.checks import assert_valid_view
from tests.unit.cards.strategies import bundles, tasks_for

WHERE = {"kandev_url": KANDEV_URL, "channel": "C0123", "ts": "1764488872.000100"}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _picks(data, form) -> dict:
    """A person's picks in ``form``'s choices (Slack's state.values shapes), Other… often."""
    values: dict = {}
    for block in form["blocks"]:
        element = block.get("element") or {}
        if block.get("type") != "input" or "options" not in element:
            continue
        other = [o for o in element["options"] if o["value"] == OTHER_VALUE]
        chosen = data.draw(
            st.one_of(st.none(), st.sampled_from(element["options"]), st.sampled_from(other))
            if other
            else st.one_of(st.none(), st.sampled_from(element["options"]))
        )
        values[block["block_id"]] = {
            element["action_id"]: {"type": element["type"], "selected_option": chosen}
        }
    return values


def _picked(values: dict, block_id: str) -> str | None:
    chosen = (values.get(block_id) or {}).get("kq_choice", {}).get("selected_option")
    return chosen["value"] if chosen else None


def _text_fields(view) -> set[str]:
    return {
        b["block_id"]
        for b in view["blocks"]
        if b.get("type") == "input" and b["element"]["action_id"] == ACTION_TEXT
    }


def _with_options(bundle) -> list[int]:
    return [i for i, q in enumerate(bundle.questions) if q.options]


@SETTINGS
@given(data=st.data())
def test_a_text_box_only_under_a_question_answered_other(data):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    form = build_answer_modal(bundle, task, FormPlace(**WHERE))
    assert_valid_view(form)
    shown = {b.get("block_id") for b in form["blocks"]}
    listed = [i for i in _with_options(bundle) if choice_block_id(i, bundle.questions[i]) in shown]
    assert not _text_fields(form) & {text_block_id(i, bundle.questions[i]) for i in listed}

    for _ in range(data.draw(st.integers(1, 3))):  # pick, change one's mind, pick again
        values = _picks(data, form)
        view = with_other_fields(form, values) or form
        assert_valid_view(view)
        other = {
            text_block_id(i, bundle.questions[i])
            for i in listed
            if _picked(values, choice_block_id(i, bundle.questions[i])) == OTHER_VALUE
        }
        fields = _text_fields(view) & {text_block_id(i, bundle.questions[i]) for i in listed}
        assert fields == other
        assert with_other_fields(view, values) is None  # settled: no second update
        assert_valid_view(refill_form(form, values, {}))
        form = view
