"""Property: whatever Kandev sends, every card and modal stays within every Slack limit, and
nothing untrusted can ping or forge a link."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kandev_slack.cards import escape_mrkdwn, markdown_to_mrkdwn, outcome_line, words
from kandev_slack.cards.ids import ACTION_OPEN, BLOCK_OUTCOME
from kandev_slack.cards.limits import MAX_MESSAGE_TEXT, slack_len
from kandev_slack.cards.wording import MAX_OUTCOME_LINE
from kandev_slack.cards.words import already_answered_message, closed_card_message, lost_message
from kandev_slack.core.domain import CardOutcome, CardState
from kandev_slack.kinds.question.cards.card import render_card
from kandev_slack.kinds.question.cards.modals import (
    FormPlace,
    build_answer_modal,
    build_other_modal,
    build_reject_modal,
    build_result_modal,
    build_sending_modal,
    refill_form,
)
from tests.kit.factories import KANDEV_URL, NOW
from tests.unit.cards.checks import assert_valid_message, assert_valid_view
from tests.unit.cards.safety import unsafe_angles
from tests.unit.cards.strategies import bundles, free_texts, outcomes_for, tasks_for, texts
from tests.unit.properties import examples

# raise it for a deeper run, with HYPOTHESIS_PROFILE=full (the unit profile caps it)
EXAMPLES = int(os.environ.get("CARDS_HYPOTHESIS_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=examples(EXAMPLES),
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],  # no slow "explain"
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(data=st.data())
def test_every_card_stays_within_limits(data):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    state = data.draw(st.sampled_from(list(CardState)))
    outcome = data.draw(outcomes_for(bundle, state))
    card = render_card(bundle, task, state, outcome, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(card, allowed_users={"U0123ABC"})
    buttons = card["blocks"][-1]["elements"]
    if state.terminal:
        assert [b["action_id"] for b in buttons] == [ACTION_OPEN]
    else:  # the "More" overflow: I'm on it, Skip…, Reject…, Conversation
        (more,) = buttons
        assert more["type"] == "overflow" and len(more["options"]) == 4


@SETTINGS
@given(data=st.data())
def test_every_modal_stays_within_limits(data):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    where = {"kandev_url": KANDEV_URL, "channel": "C0123", "ts": "1764488872.000100"}
    assert_valid_view(build_answer_modal(bundle, task, FormPlace(**where)))
    assert_valid_view(build_other_modal(bundle, task, bundle.questions[0], FormPlace(**where)))
    assert_valid_view(build_reject_modal(bundle, task, FormPlace(**where)))
    outcome = data.draw(outcomes_for(bundle, CardState.ANSWERED))
    if outcome is not None:
        message = lost_message(bundle, outcome)
        assert_valid_view(
            build_result_modal("Someone else answered first", message), allowed_users={"U0123ABC"}
        )


def _entered(data, form) -> dict:
    """What a person may have entered in ``form``'s inputs (Slack's state.values shapes)."""
    values: dict = {}
    for block in form["blocks"]:
        if block["type"] != "input":
            continue
        element = block["element"]
        if element["type"] == "plain_text_input":
            text = data.draw(st.one_of(st.none(), free_texts()))
            entry = {"type": "plain_text_input", "value": text}
        else:
            option = data.draw(st.one_of(st.none(), st.sampled_from(element["options"])))
            entry = {"type": element["type"], "selected_option": option}
        values[block["block_id"]] = {element["action_id"]: entry}
    return values


@SETTINGS
@given(data=st.data())
def test_every_form_brought_back_with_kandevs_refusal_stays_within_limits(data):
    """The form again after Kandev refused it (views.update): whatever was entered, whatever
    Kandev said, under any of its fields."""
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    where = {"kandev_url": KANDEV_URL, "channel": "C0123", "ts": "1764488872.000100"}
    for form in (
        build_answer_modal(bundle, task, FormPlace(**where)),
        build_other_modal(bundle, task, bundle.questions[0], FormPlace(**where)),
        build_reject_modal(bundle, task, FormPlace(**where)),
    ):
        fields = [b["block_id"] for b in form["blocks"] if b["type"] == "input"]
        refused = data.draw(st.sampled_from(fields))
        message = words.invalid_message(data.draw(texts(max_size=3000)))
        view = refill_form(form, _entered(data, form), {refused: message})
        assert_valid_view(view)
    assert_valid_view(build_sending_modal("answer"))
    assert_valid_view(build_sending_modal("reject"))


@SETTINGS
@given(data=st.data())
def test_every_outcome_edit_is_condensed_within_limits(data):
    """Resolved in every way Kandev accepts (several options per question, 2,000 characters of
    free text in each question, long reasons): the edit keeps only the link button and an
    outcome line of bounded length."""
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    state = data.draw(st.sampled_from([s for s in CardState if s.terminal]))
    outcome = data.draw(outcomes_for(bundle, state)) or CardOutcome(state=state, at=NOW)
    outcome = outcome.model_copy(update={"state": state})
    card = render_card(bundle, task, state, outcome, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(card, allowed_users={"U0123ABC"})
    assert [b["action_id"] for b in card["blocks"][-1]["elements"]] == [ACTION_OPEN]
    line = outcome_line(outcome, bundle)
    assert slack_len(line) <= MAX_OUTCOME_LINE
    shown = next(b for b in card["blocks"] if b.get("block_id") == BLOCK_OUTCOME)
    assert shown["text"]["text"].startswith(f"*{line}* · <!date^")
    # outcome-first: right under the title
    assert [b.get("block_id") for b in card["blocks"][:2]] == ["kq_title", BLOCK_OUTCOME]
    assert "<@" not in card["text"]  # the notification text names nobody


@SETTINGS
@given(data=st.data())
def test_every_message_quoting_an_answer_is_within_limits(data):
    bundle = data.draw(bundles())
    state = data.draw(st.sampled_from(list(CardState)))
    outcome = data.draw(outcomes_for(bundle, state)) or CardOutcome(state=state, at=NOW)
    for text in (
        lost_message(bundle, outcome),
        already_answered_message(bundle, outcome),
        words.resolved_already_message(bundle, outcome, action="reject"),
        closed_card_message(outcome, bundle),
    ):
        assert text.strip() and slack_len(text) <= MAX_MESSAGE_TEXT
        assert unsafe_angles(text, allowed_users={"U0123ABC"}) == []
        assert_valid_view(build_result_modal("Already answered", text), allowed_users={"U0123ABC"})


@settings(max_examples=examples(3 * EXAMPLES), deadline=None, database=None, phases=SETTINGS.phases)
@given(text=texts())
def test_converted_markdown_never_pings_or_forges(text):
    assert unsafe_angles(markdown_to_mrkdwn(text)) == []
    assert "<" not in escape_mrkdwn(text) and ">" not in escape_mrkdwn(text)
