"""Modals: what they contain, and validation of submissions as Kandev would validate them."""

from __future__ import annotations

import pytest

from kandev_slack.cards import (
    ACTION_CHOICE,
    ACTION_REASON,
    ACTION_TEXT,
    BLOCK_REASON,
    CALLBACK_ANSWER,
    CALLBACK_OTHER,
    CALLBACK_REJECT,
    CALLBACK_RESULT,
    choice_block_id,
    ids,
    parse_modal_metadata,
    text_block_id,
    words,
)
from kandev_slack.cards.limits import MAX_VIEW_BLOCKS
from kandev_slack.core.clarification import Answer
from kandev_slack.kinds.question.cards.modals import (
    FormPlace,
    build_answer_modal,
    build_other_modal,
    build_outcome_modal,
    build_reject_modal,
    build_result_modal,
    build_sending_modal,
    refill_form,
    with_other_fields,
)
from kandev_slack.kinds.question.cards.submissions import (
    parse_answer_submission,
    parse_reject_submission,
)
from tests.kit.factories import DB_QUESTION, KANDEV_URL, PENDING_ID, make_bundle
from tests.unit.cards.checks import assert_valid_view

WHERE = {"kandev_url": KANDEV_URL, "channel": "C0123", "ts": "1764488872.000100"}


def inputs(view) -> dict[str, dict]:
    return {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}


def pick(block_id: str, value: str | None) -> dict:
    selected = {"value": value, "text": {"type": "plain_text", "text": "x"}} if value else None
    return {block_id: {ACTION_CHOICE: {"type": "radio_buttons", "selected_option": selected}}}


def write(block_id: str, value: str | None) -> dict:
    return {block_id: {ACTION_TEXT: {"type": "plain_text_input", "value": value}}}


def state(*parts: dict) -> dict:
    merged: dict = {}
    for part in parts:
        merged.update(part)
    return merged


# ---- answer modal ----------------------------------------------------------------------------


def test_answer_modal_has_a_radio_group_per_question_and_no_text_box(three_questions, task):
    view = build_answer_modal(three_questions, task, FormPlace(**WHERE))
    assert_valid_view(view)
    assert view["callback_id"] == CALLBACK_ANSWER
    assert view["title"]["text"] == "Answer agent questions"
    assert view["submit"]["text"] == "Send answers"
    blocks = inputs(view)
    # no text box under every question: "Other…" is the one path to own words
    assert list(blocks) == ["kq_choice:0:db", "kq_choice:1:cache", "kq_choice:2:queue"]
    radio = blocks["kq_choice:0:db"]
    # the prompt is the label (said once), and a choice is required: "Other…" for own words
    assert radio["label"]["text"] == "1/3 · Which database should we use?"
    assert radio["optional"] is False
    assert radio["dispatch_action"] is True  # a pick is sent at once: Other's field follows
    assert radio["element"]["type"] == "radio_buttons"
    assert radio["element"]["action_id"] == ACTION_CHOICE
    assert [o["value"] for o in radio["element"]["options"]] == ["q1_opt1", "q1_opt2", "#other"]
    assert radio["element"]["options"][1]["description"]["text"] == "Document store"
    assert radio["element"]["options"][2]["text"]["text"] == "Other…"
    meta = parse_modal_metadata(view["private_metadata"])
    assert (meta.pending_id, meta.channel, meta.ts, meta.origin) == (
        PENDING_ID,
        "C0123",
        "1764488872.000100",
        "card",
    )
    shown = str(view["blocks"])
    assert shown.count("Which database should we use?") == 1  # no heading repeats it
    assert "(optional)" not in shown


def test_a_long_prompt_gets_its_own_block_and_the_field_its_heading(task):
    prompt = "Which database should we use?\n\nWe need **transactions** and a `JSON` column."
    bundle = make_bundle({**DB_QUESTION, "prompt": prompt})
    view = build_answer_modal(bundle, task, FormPlace(**WHERE))
    assert_valid_view(view)
    sections = [b["text"]["text"] for b in view["blocks"] if b["type"] == "section"]
    assert any("*transactions*" in t for t in sections)
    assert inputs(view)["kq_choice:0:db"]["label"]["text"] == "Database"


def test_a_question_without_options_requires_its_text(task):
    bundle = make_bundle({**DB_QUESTION, "options": []})
    view = build_answer_modal(bundle, task, FormPlace(**WHERE))
    assert_valid_view(view)
    [only] = inputs(view).values()
    assert only["block_id"] == "kq_text:0:db" and only["optional"] is False
    assert only["label"]["text"] == "Which database should we use?"


def test_other_without_text_is_a_field_error_and_with_text_an_answer(one_question):
    errors = parse_answer_submission(
        one_question, state(pick("kq_choice:0:db", "#other"), write("kq_text:0:db", " "))
    )
    assert errors == {"kq_text:0:db": "Write your answer: you picked Other"}
    answers = parse_answer_submission(
        one_question, state(pick("kq_choice:0:db", "#other"), write("kq_text:0:db", "MariaDB"))
    )
    assert answers == [Answer(question_id="db", custom_text="MariaDB")]


def test_complete_submission_gives_answers_in_bundle_order(three_questions):
    answers = parse_answer_submission(
        three_questions,
        state(
            pick("kq_choice:2:queue", "q3_opt2"),
            write("kq_text:2:queue", None),
            pick("kq_choice:0:db", None),
            write("kq_text:0:db", "  SQLite, because it is small  "),
            pick("kq_choice:1:cache", "q2_opt1"),
            write("kq_text:1:cache", "with a 1 GB limit"),
        ),
    )
    assert answers == [
        Answer(question_id="db", selected_options=[], custom_text="SQLite, because it is small"),
        Answer(question_id="cache", selected_options=["q2_opt1"], custom_text="with a 1 GB limit"),
        Answer(question_id="queue", selected_options=["q3_opt2"], custom_text=""),
    ]


def test_missing_answer_is_a_field_error(three_questions):
    errors = parse_answer_submission(
        three_questions,
        state(
            pick("kq_choice:0:db", "q1_opt1"),
            write("kq_text:0:db", None),
            pick("kq_choice:1:cache", None),
            write("kq_text:1:cache", "   \n "),
            pick("kq_choice:2:queue", "q3_opt1"),
            write("kq_text:2:queue", ""),
        ),
    )
    assert errors == {"kq_text:1:cache": "Pick an option or write an answer"}


def test_option_of_another_question_is_refused(three_questions):
    errors = parse_answer_submission(
        three_questions,
        state(
            pick("kq_choice:0:db", "q2_opt1"),
            write("kq_text:0:db", None),
            pick("kq_choice:1:cache", "q2_opt1"),
            pick("kq_choice:2:queue", "q3_opt1"),
        ),
    )
    assert list(errors) == ["kq_choice:0:db"]
    assert "not part of this question" in errors["kq_choice:0:db"]


def test_free_text_limit_counts_code_points_after_stripping(one_question):
    at_limit = "😀" * 2000  # 2,000 code points (4,000 UTF-16 units): Kandev accepts it
    ok = parse_answer_submission(one_question, write("kq_text:0:db", f"  {at_limit}\n"))
    assert ok == [Answer(question_id="db", custom_text=at_limit)]
    over = parse_answer_submission(one_question, write("kq_text:0:db", "😀" * 2000 + "a"))
    assert over == {"kq_text:0:db": "Your answer is 2,001 characters; Kandev accepts at most 2,000"}
    long = parse_answer_submission(one_question, write("kq_text:0:db", "x" * 2314))
    assert long == {"kq_text:0:db": "Your answer is 2,314 characters; Kandev accepts at most 2,000"}


def test_subset_modal_cannot_be_submitted_without_the_other_questions(three_questions, task):
    view = build_answer_modal(three_questions, task, FormPlace(**WHERE), question_ids=["cache"])
    assert_valid_view(view)
    assert list(inputs(view)) == ["kq_choice:1:cache"]
    errors = parse_answer_submission(three_questions, pick("kq_choice:1:cache", "q2_opt1"))
    assert list(errors) == ["kq_choice:1:cache"]
    assert "Database" in errors["kq_choice:1:cache"] and "Queue" in errors["kq_choice:1:cache"]


def test_submission_without_any_of_our_inputs_is_a_programming_error(one_question):
    with pytest.raises(ValueError):
        parse_answer_submission(one_question, {"other": {}})


# ---- other answer modal -------------------------------------------------------------------------


def test_other_modal_requires_text_and_offers_options_too(one_question, task):
    view = build_other_modal(one_question, task, one_question.questions[0], FormPlace(**WHERE))
    assert_valid_view(view)
    assert view["callback_id"] == CALLBACK_OTHER and view["title"]["text"] == "Other answer"
    blocks = inputs(view)
    assert list(blocks) == ["kq_text:0:db", "kq_choice:0:db"]
    assert blocks["kq_text:0:db"]["optional"] is False
    assert blocks["kq_text:0:db"]["label"]["text"] == "Which database should we use?"
    assert blocks["kq_choice:0:db"]["label"]["text"] == "Also pick an option"
    assert blocks["kq_choice:0:db"]["optional"] is True
    answers = parse_answer_submission(
        one_question,
        state(write("kq_text:0:db", "Postgres, but managed"), pick("kq_choice:0:db", "q1_opt1")),
    )
    assert answers == [
        Answer(question_id="db", selected_options=["q1_opt1"], custom_text="Postgres, but managed")
    ]
    assert parse_answer_submission(
        one_question, state(write("kq_text:0:db", " "), pick("kq_choice:0:db", None))
    ) == {"kq_text:0:db": "Pick an option or write an answer"}


def test_other_modal_refuses_a_foreign_question(one_question, three_questions, task):
    with pytest.raises(ValueError):
        build_other_modal(one_question, task, three_questions.questions[1], FormPlace(**WHERE))


def test_long_option_texts_are_listed_in_full_in_the_modal(task):
    label = "A label that is far too long to fit in a radio button option of seventy-five chars"
    bundle = make_bundle({**DB_QUESTION, "options": [{"option_id": "a", "label": label}]})
    view = build_answer_modal(bundle, task, FormPlace(**WHERE))
    assert_valid_view(view)
    option = inputs(view)["kq_choice:0:db"]["element"]["options"][0]
    assert option["text"]["text"].endswith("…") and len(option["text"]["text"]) <= 75
    full = [b["text"]["text"] for b in view["blocks"] if b["type"] == "section"]
    assert f"*Options in full*\n• *{label}*" in full


# ---- reject modal -----------------------------------------------------------------------------


def test_reject_modal_requires_a_reason(three_questions, task):
    view = build_reject_modal(three_questions, task, FormPlace(**WHERE, origin="shortcut"))
    assert_valid_view(view)
    assert view["callback_id"] == CALLBACK_REJECT and view["submit"]["text"] == "Reject"
    reason = inputs(view)[BLOCK_REASON]
    assert reason["optional"] is False and reason["element"]["max_length"] == 2000
    assert reason["element"]["action_id"] == ACTION_REASON
    assert parse_modal_metadata(view["private_metadata"]).origin == "shortcut"


def _reason(value):
    return {BLOCK_REASON: {ACTION_REASON: {"type": "plain_text_input", "value": value}}}


def test_parse_reject_submission():
    assert parse_reject_submission(_reason("  not now \n")) == "not now"
    assert parse_reject_submission(_reason("  ")) == {
        BLOCK_REASON: "Write a reason: the agent reads it"
    }
    assert parse_reject_submission(_reason(None)) == {
        BLOCK_REASON: "Write a reason: the agent reads it"
    }
    assert parse_reject_submission(_reason("é" * 2001)) == {
        BLOCK_REASON: "Your reason is 2,001 characters; Kandev accepts at most 2,000"
    }
    assert parse_reject_submission(_reason("👍" * 2000)) == "👍" * 2000


# ---- result modal -----------------------------------------------------------------------------


def test_result_modal_is_read_only_and_within_limits():
    view = build_result_modal("This question was already answered elsewhere", "Done: *MongoDB*.")
    assert_valid_view(view)
    assert view["callback_id"] == CALLBACK_RESULT and "submit" not in view
    assert view["title"]["text"] == "This question was…"
    assert view["close"]["text"] == "Close"
    assert view["blocks"][0]["text"]["text"] == "Done: *MongoDB*."


# ---- a submitted form: "Sending…", then the form again with Kandev's refusal ---------------


def test_the_sending_modal_is_read_only_and_says_what_is_on_its_way():
    for action in ("answer", "reject"):
        view = build_sending_modal(action)
        assert_valid_view(view)
        assert view["callback_id"] == CALLBACK_RESULT and "submit" not in view
        assert view["title"]["text"] == words.sending_title(action)
        assert words.sending_message(action)[:40] in view["blocks"][0]["text"]["text"]


def test_a_refilled_reject_form_keeps_the_reason_and_shows_the_error_below_it(task):
    form = build_reject_modal(make_bundle(), task, FormPlace(**WHERE))
    values = {BLOCK_REASON: {ACTION_REASON: {"type": "plain_text_input", "value": "too vague"}}}

    view = refill_form(form, values, {BLOCK_REASON: "Kandev said *no*"}, metadata="kept")

    assert_valid_view(view)
    blocks = view["blocks"]
    [at] = [i for i, b in enumerate(blocks) if b.get("block_id") == BLOCK_REASON]
    assert blocks[at]["element"]["initial_value"] == "too vague"
    assert blocks[at + 1]["type"] == "context"
    assert blocks[at + 1]["elements"][0]["text"] == "⚠️ Kandev said *no*"
    assert view["private_metadata"] == "kept" and view["callback_id"] == CALLBACK_REJECT
    assert "initial_value" not in inputs(form)[BLOCK_REASON]["element"]  # the form is untouched


def test_a_refilled_answer_form_keeps_each_pick_and_text(three_questions, task):
    form = build_answer_modal(three_questions, task, FormPlace(**WHERE))
    first = three_questions.questions[0]
    choice_id, text_id = choice_block_id(0, first), text_block_id(0, first)
    picked = ids.OTHER_VALUE  # its own words: Other's field comes back with them
    values = state(pick(choice_id, picked), write(text_id, "and more"))

    view = refill_form(form, values, {})

    assert_valid_view(view)
    shown = inputs(view)
    assert shown[choice_id]["element"]["initial_option"]["value"] == picked
    assert shown[text_id]["element"]["initial_value"] == "and more"
    assert len(view["blocks"]) == len(form["blocks"]) + 1  # no error: only Other's field
    others = [b for k, b in shown.items() if k not in (choice_id, text_id)]
    assert all("initial_option" not in b["element"] for b in others)


def test_a_form_with_no_room_left_shows_the_error_as_the_fields_hint(task):
    form = build_reject_modal(make_bundle(), task, FormPlace(**WHERE))
    filler = {"type": "divider"}
    form["blocks"] = [filler] * (MAX_VIEW_BLOCKS - len(form["blocks"])) + form["blocks"]

    view = refill_form(form, {}, {BLOCK_REASON: "Kandev said no"})

    assert len(view["blocks"]) == MAX_VIEW_BLOCKS
    assert inputs(view)[BLOCK_REASON]["hint"]["text"] == "⚠️ Kandev said no"


# ---- how a submitted form ends ------------------------------------------------------------------


def test_an_answer_form_ends_titled_answered():
    view = build_outcome_modal("won", "", "answer")
    assert_valid_view(view)
    assert view["title"]["text"] == "Answered"


def test_a_rejection_never_ends_on_a_modal_titled_sent():
    view = build_outcome_modal("won", "", "reject")
    assert view["title"]["text"] != "Sent" and "Rejected" in view["blocks"][0]["text"]["text"]


# ---- "Other…" opens its field --------------------------------------------------------------


def test_picking_other_shows_one_field_under_that_question_only(three_questions, task):
    form = build_answer_modal(three_questions, task, FormPlace(**WHERE))
    shown = {"id": "V1", "hash": "h", "state": {"values": {}}, **form}
    picked = state(pick("kq_choice:0:db", "q1_opt1"), pick("kq_choice:1:cache", "#other"))
    updated = with_other_fields(shown, picked)
    assert updated is not None
    assert_valid_view(updated)
    assert "id" not in updated and "hash" not in updated and "state" not in updated
    assert list(inputs(updated)) == [
        "kq_choice:0:db",
        "kq_choice:1:cache",
        "kq_text:1:cache",
        "kq_choice:2:queue",
    ]
    field = inputs(updated)["kq_text:1:cache"]
    assert field["element"]["action_id"] == ACTION_TEXT and field["optional"] is False
    assert field["element"]["max_length"] == 2000 and field["label"]["text"] == "Your own answer"
    assert with_other_fields(updated, picked) is None  # already so: no views.update
    # another option instead: the field goes (and its text is not sent)
    back = with_other_fields(updated, state(pick("kq_choice:1:cache", "q2_opt1")))
    assert back is not None and list(inputs(back)) == list(inputs(form))
    # what was written there is answered, once the form is sent
    answers = parse_answer_submission(
        three_questions,
        state(
            pick("kq_choice:0:db", "q1_opt1"),
            pick("kq_choice:1:cache", "#other"),
            write("kq_text:1:cache", "Memcached"),
            pick("kq_choice:2:queue", "q3_opt1"),
        ),
    )
    assert [a.custom_text for a in answers] == ["", "Memcached", ""]


def test_other_without_its_field_is_pointed_out_on_the_choice(one_question):
    errors = parse_answer_submission(one_question, pick("kq_choice:0:db", "#other"))
    assert errors == {"kq_choice:0:db": "Write your answer: you picked Other"}
