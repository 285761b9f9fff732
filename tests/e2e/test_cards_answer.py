"""Answering from Slack: one click, the multi-question modal, free text, reject. Each answer is
verified in Kandev (final status) and at the agent (what its blocked tool call returned)."""

from __future__ import annotations

import pytest

from kandev_slack.kits.fakeslack import ALICE, BOB, ViewSubmissionBlocked
from tests.e2e.helpers import (
    QUIET_ROW,
    act,
    assert_sending,
    assert_terminal_controls,
    buttons,
    card_posts,
    card_updates,
    choice_and_text_blocks,
    click_stale,
    db_question,
    input_blocks,
    more_options,
    open_modal,
    outcome_line,
    pick_other,
    response_of,
    skip,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_form_result,
    wait_outcome,
)
from tests.kit.harness import CHANNEL, option_id, sample_questions

ANSWER_MODAL = "kq_answer_modal"
OTHER_MODAL = "kq_other_modal"
REJECT_MODAL = "kq_reject_modal"


def test_one_click_answers_in_kandev_and_unblocks_the_agent(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], context="We need to store orders.", title="Pick a DB")
    card = wait_card(fake_slack, bundle.pending_id)
    # One row of answers; everything else in one quiet "More" overflow.
    assert buttons(card) == ["PostgreSQL", "MongoDB", "Other answer…"]
    assert more_options(card) == QUIET_ROW

    ack = slack_driver(bot.events_url).click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    assert ack.status == 200
    assert ack.elapsed < 3.0

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    result = seed.server.agent_result(bundle.task_id, timeout=10)
    assert result is not None, "the agent was not unblocked"
    assert result["tool"]["is_error"] is False
    assert result["tool"]["parsed"] == {"db": {"selected_option": "q1_opt2"}}

    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: MongoDB"
    assert_terminal_controls(edited)
    # short and outcome-first: the chosen answer marked, the other options gone (issue 21)
    assert "Which database should we use?\n✅ *MongoDB*" in edited.all_text
    assert "PostgreSQL" not in edited.all_text
    # The card is the receipt: the winner is told nothing more.
    fake_slack.settle(quiet=1.0, timeout=10)
    assert fake_slack.ephemerals(user=ALICE.id) == []
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1

    # Alice clicks again on what her client still shows: she is reminded, nothing changes.
    updates = len(card_updates(fake_slack, card.ts))
    click_stale(slack_driver(bot.events_url), CHANNEL, card.ts, text="PostgreSQL", user=ALICE)
    told = wait_ephemeral(fake_slack, ALICE.id, "already answered")
    assert told.text == "You already answered this: MongoDB. Nothing more was sent."
    fake_slack.settle(quiet=1.0, timeout=10)
    assert len(card_updates(fake_slack, card.ts)) == updates
    final = seed.server.final_status(bundle.task_id, bundle.pending_id)
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]


def test_multi_question_modal_requires_every_answer(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed(sample_questions(3, options=3), context="Three choices.", title="Three at once")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    mark = fake_slack.mark()
    ack = driver.click(CHANNEL, card.ts, text="Answer…", user=ALICE)
    assert ack.status == 200
    view = open_modal(fake_slack, ANSWER_MODAL, after=mark)
    assert view.user == ALICE.id
    per_question = choice_and_text_blocks(view)
    assert len(per_question) == 3
    for number in (1, 2, 3):  # each prompt is its field's label (issue 21)
        assert f"{number}/3 · " in view.all_text

    # Question 3 left empty: its choice is required, so Slack itself does not send the form
    # (issue 21: the form helps before you send); were it sent anyway, the bot answers with an
    # error on question 3 and the modal stays open; nothing is sent.
    partial = {
        per_question[0][0]: {"kq_choice": option_id(1, 2)},
        per_question[1][0]: {"kq_choice": option_id(2, 3)},
    }
    with pytest.raises(ViewSubmissionBlocked):
        driver.submit_view(view, partial)
    ack = driver.submit_view(view, partial, enforce_client_rules=False)
    assert ack.status == 200
    assert ack.json is not None and ack.json.get("response_action") == "errors", ack.body
    errors = ack.json["errors"]
    assert set(errors) <= set(per_question[2]) and len(errors) == 1, errors
    assert fake_slack.view(view.id).is_open
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
    assert bundle.pending_id in {b["pending_id"] for b in seed.server.list_pending()}
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) is None

    # Everything answered (question 3 by free text): accepted ("Sending…", then "Answered" in
    # the modal), recorded, card edited.
    # No text box under any question until its "Other…" is picked (issue item 7).
    assert not any(text in input_blocks(view) for _choice, text in per_question)
    full = dict(partial)
    view = pick_other(driver, fake_slack, view, per_question[2][0])  # its field appears
    assert [b for b in input_blocks(view) if b.startswith("kq_text:")] == [per_question[2][1]]
    full[per_question[2][1]] = {"kq_text": "  Neither, use the existing one  "}
    ack = driver.submit_view(view, full)
    assert_sending(ack)
    assert wait_form_result(fake_slack, view.id).definition["title"]["text"] == "Answered"

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    assert response_of(final, "q1")["selected_options"] == [option_id(1, 2)]
    assert response_of(final, "q2")["selected_options"] == [option_id(2, 3)]
    assert not response_of(final, "q3").get("selected_options")
    assert response_of(final, "q3")["custom_text"] == "Neither, use the existing one"
    result = seed.server.agent_result(bundle.task_id, timeout=10)
    assert result is not None and result["tool"]["is_error"] is False
    assert result["tool"]["parsed"]["q1"] == {"selected_option": option_id(1, 2)}

    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == (
        f"✅ Answered by <@{ALICE.id}> in Slack: Option 1.2; Option 2.3; "
        "“Neither, use the existing one”"
    )
    assert_terminal_controls(edited)
    assert "Neither, use the existing one" in edited.all_text
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1


def test_free_text_answer_with_a_length_check(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Free text")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    mark = fake_slack.mark()
    driver.click(CHANNEL, card.ts, text="Other answer…", user=ALICE)
    view = open_modal(fake_slack, OTHER_MODAL, after=mark)
    [(_choice_block, text_block)] = choice_and_text_blocks(view)

    # 2,001 code points (emoji count one each, as Kandev counts them) — one too many.
    too_long = "🙂" * 1001 + "x" * 1000
    assert len(too_long) == 2001
    ack = driver.submit_view(view, {text_block: {"kq_text": too_long}}, enforce_client_rules=False)
    assert ack.json is not None and ack.json.get("response_action") == "errors", ack.body
    assert list(ack.json["errors"]) == [text_block]
    assert "2,001" in ack.json["errors"][text_block]
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"

    # Exactly 2,000 code points, with emoji and markup characters: accepted.
    answer = "<b>Use SQLite</b> & 🙂 " + "🚀" * 980 + "y" * 998
    answer = answer[:2000]
    assert len(answer) == 2000
    ack = driver.submit_view(view, {text_block: {"kq_text": answer}})
    assert_sending(ack)

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    assert response_of(final, "db")["custom_text"] == answer
    assert not response_of(final, "db").get("selected_options")
    result = seed.server.agent_result(bundle.task_id, timeout=10)
    assert result is not None and result["tool"]["is_error"] is False
    assert result["tool"]["parsed"] == {"db": {"custom_text": answer}}

    edited = wait_outcome(fake_slack, card.ts, "✅")
    line = outcome_line(edited)
    assert line is not None and line.startswith(
        f"✅ Answered by <@{ALICE.id}> in Slack: “&lt;b&gt;Use SQLite&lt;/b&gt;"
    )
    assert line.endswith("…”") and "free text" not in line
    assert_terminal_controls(edited)
    assert "&lt;b&gt;Use SQLite&lt;/b&gt; &amp; 🙂" in edited.all_text
    assert "<b>" not in edited.all_text


def test_reject_with_a_reason(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Reject me")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    mark = fake_slack.mark()
    act(driver, CHANNEL, card.ts, "Reject…", user=ALICE)
    view = open_modal(fake_slack, REJECT_MODAL, after=mark)

    ack = driver.submit_view(view, {"kq_reason": {"kq_reason": "   \n  "}})
    assert ack.json is not None and ack.json.get("response_action") == "errors", ack.body
    assert list(ack.json["errors"]) == ["kq_reason"]
    assert fake_slack.view(view.id).is_open
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"

    reason = "Not now, ask again after the release"
    ack = driver.submit_view(view, {"kq_reason": {"kq_reason": reason}})
    assert_sending(ack)

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "rejected")
    assert final["status"] == "rejected"
    result = seed.server.agent_result(bundle.task_id, timeout=10)
    assert result is not None and result["tool"]["is_error"] is False
    parsed = result["tool"]["parsed"]
    assert parsed["rejected"] is True
    assert parsed["reject_reason"] == reason

    edited = wait_outcome(fake_slack, card.ts, "⛔")
    assert outcome_line(edited) == f"⛔ Rejected by <@{ALICE.id}> in Slack: “{reason}”"
    assert_terminal_controls(edited)
    fake_slack.settle(quiet=1.0, timeout=10)
    assert fake_slack.ephemerals(user=ALICE.id) == []


def test_skip_rejects_at_once_with_kandevs_own_reason(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Skip me")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    opened = len(fake_slack.calls("views.open"))
    ack = skip(driver, CHANNEL, card.ts, user=ALICE)  # Skip… in More, then "Skip it"
    assert ack.status == 200

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "rejected")
    assert final["status"] == "rejected"
    result = seed.server.agent_result(bundle.task_id, timeout=10)
    assert result is not None
    assert result["tool"]["parsed"]["reject_reason"] == "User skipped"
    edited = wait_outcome(fake_slack, card.ts, "⏭")
    assert outcome_line(edited) == f"⏭ Skipped by <@{ALICE.id}> in Slack"
    assert_terminal_controls(edited)
    assert len(fake_slack.calls("views.open")) == opened  # no form was asked for

    # A second Skip from a stale client: told, and nothing more reaches Kandev.
    click_stale(driver, CHANNEL, card.ts, text="Skip…", user=BOB)
    confirm = fake_slack.wait_for_ephemeral(BOB.id, lambda e: "Skip it" in str(e.blocks))
    driver.click_ephemeral(confirm, text="Skip it")
    told = wait_ephemeral(fake_slack, BOB.id, "first")
    assert told.text.startswith(f"<@{ALICE.id}> skipped this question first in Slack.")
