"""Property: agent text never notifies anyone. ``@here``/``@channel``/``@everyone`` in any case
and surrounded by anything, mention tokens and user-group mentions, in every field of a bundle,
its task, its answers and reasons, reach no card, modal, message or fallback text in a form
Slack would turn into a notification; every mrkdwn object is ``verbatim``."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from kandev_slack.cards import escape_mrkdwn, fit_escaped, markdown_to_mrkdwn, outcome_line, words
from kandev_slack.cards.blocks import plain
from kandev_slack.cards.words import (
    already_answered_message,
    closed_card_message,
    invalid_message,
    lost_message,
)
from kandev_slack.core.domain import CardOutcome, CardState
from kandev_slack.kinds.question.cards.card import render_card
from kandev_slack.kinds.question.cards.modals import (
    FormPlace,
    build_answer_modal,
    build_other_modal,
    build_reject_modal,
    build_result_modal,
)
from tests.kit.factories import KANDEV_URL, NOW
from tests.unit.cards.checks import assert_valid_message, assert_valid_view
from tests.unit.cards.safety import assert_cannot_notify, assert_text_cannot_notify, notifying
from tests.unit.cards.strategies import (
    broadcast_words,
    bundles,
    mention_texts,
    outcomes_for,
    tasks_for,
)
from tests.unit.cards.test_limits_property import SETTINGS

ALLOWED = {"U0123ABC"}


@SETTINGS
@given(data=st.data())
def test_no_card_in_any_state_can_notify(data):
    bundle = data.draw(bundles(mention_texts))
    task = data.draw(tasks_for(bundle, mention_texts))
    state = data.draw(st.sampled_from(list(CardState)))
    outcome = data.draw(outcomes_for(bundle, state, mention_texts))
    card = render_card(bundle, task, state, outcome, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(card, allowed_users=ALLOWED)
    assert_cannot_notify(card, allowed_users=ALLOWED)


@SETTINGS
@given(data=st.data())
def test_no_modal_can_notify(data):
    bundle = data.draw(bundles(mention_texts))
    task = data.draw(tasks_for(bundle, mention_texts))
    where = {"kandev_url": KANDEV_URL, "channel": "C0123", "ts": "1764488872.000100"}
    for view in (
        build_answer_modal(bundle, task, FormPlace(**where)),
        build_other_modal(bundle, task, bundle.questions[0], FormPlace(**where)),
        build_reject_modal(bundle, task, FormPlace(**where)),
    ):
        assert_valid_view(view)
        assert_cannot_notify(view)
    outcome = data.draw(outcomes_for(bundle, CardState.ANSWERED, mention_texts))
    if outcome is not None:
        view = build_result_modal("Someone else answered first", lost_message(bundle, outcome))
        assert_valid_view(view, allowed_users=ALLOWED)
        assert_cannot_notify(view, allowed_users=ALLOWED)


@SETTINGS
@given(data=st.data())
def test_no_message_to_a_person_can_notify(data):
    bundle = data.draw(bundles(mention_texts))
    state = data.draw(st.sampled_from(list(CardState)))
    outcome = data.draw(outcomes_for(bundle, state, mention_texts))
    if outcome is None:
        outcome = CardOutcome(state=state, at=NOW)
    said = [
        outcome_line(outcome, bundle),
        lost_message(bundle, outcome),
        lost_message(bundle, outcome, action="reject"),
        already_answered_message(bundle, outcome),
        words.resolved_already_message(bundle, outcome),
        closed_card_message(outcome, bundle),
        invalid_message(data.draw(mention_texts(3000))),
    ]
    for text in said:
        assert_text_cannot_notify(text, allowed_users=ALLOWED)


@given(word=broadcast_words(), text=mention_texts(300))
@example(word="@\u200bhere", text="")
@example(word="_@here_", text="")
@example(word="*@ChAnNeL*", text="")
@example(word="@everyone_", text="")
@example(word="@[](here)", text="")
@example(word="@[here](x)", text="")
@example(word="@![](everyone)", text="")
def test_every_way_to_render_agent_text_defuses_broadcasts(word, text):
    for raw in (word, text, word + text, text + word):
        for rendered in (
            escape_mrkdwn(raw),
            fit_escaped(raw, 3000)[0],
            markdown_to_mrkdwn(raw),
            plain(raw, 3000)["text"],
        ):
            assert notifying(rendered) == [], (raw, rendered)
