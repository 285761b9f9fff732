"""Resolved outside this bot, or by someone else first: the card always shows the winner, and
whoever clicks too late is told privately who won with what."""

from __future__ import annotations

import threading

from kandev_slack.kits.fakeslack import ALICE, BOB
from tests.e2e.helpers import (
    assert_terminal_controls,
    card_posts,
    card_updates,
    choice_and_text_blocks,
    click_stale,
    db_question,
    open_modal,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_in_form,
    wait_outcome,
)
from tests.kit.harness import CHANNEL

ENDED = "⏹ Ended — nobody answered (cancelled, expired or the agent moved on)"
LOST_TO_KANDEV = "Answered in Kandev first: PostgreSQL. Your answer was not sent."
LABELS = {"q1_opt1": "PostgreSQL", "q1_opt2": "MongoDB"}


def test_answered_in_kandev_first_then_a_late_slack_click(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Answered in the web UI")
    card = wait_card(fake_slack, bundle.pending_id)

    response = seed.server.answer(bundle.pending_id, {"db": "q1_opt1"})
    assert response.status_code == 200 and response.json()["claimed"] is True
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == "✅ Answered in Kandev: PostgreSQL"
    assert_terminal_controls(edited)
    fake_slack.settle(quiet=1.0, timeout=10)
    updates = len(card_updates(fake_slack, card.ts))

    # Bob's client still shows the buttons; he clicks MongoDB.
    ack = click_stale(slack_driver(bot.events_url), CHANNEL, card.ts, text="MongoDB", user=BOB)
    assert ack.status == 200
    told = wait_ephemeral(fake_slack, BOB.id, "PostgreSQL")
    assert told.channel == CHANNEL
    assert told.text == LOST_TO_KANDEV

    fake_slack.settle(quiet=1.0, timeout=10)
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) == "✅ Answered in Kandev: PostgreSQL"
    assert len(card_updates(fake_slack, card.ts)) == updates
    final = seed.server.final_status(bundle.task_id, bundle.pending_id)
    assert final["status"] == "answered"
    assert response_of(final, "db")["selected_options"] == ["q1_opt1"]
    assert fake_slack.ephemerals(user=ALICE.id) == []
    assert len(fake_slack.ephemerals(user=BOB.id)) == 1
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1


def test_modal_left_open_while_kandev_answered(app_factory, seed, fake_slack, slack_driver):
    """Bob opens "Other answer…", the question is answered in Kandev meanwhile, then Bob sends
    his text: it is not sent, the modal tells him the winner, the card keeps the Kandev answer."""
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Answered while Bob was typing")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)
    mark = fake_slack.mark()
    driver.click(CHANNEL, card.ts, text="Other answer…", user=BOB)
    view = open_modal(fake_slack, "kq_other_modal", after=mark)
    [(_choice, text_block)] = choice_and_text_blocks(view)

    seed.server.answer(bundle.pending_id, {"db": "q1_opt1"})
    ack = driver.submit_view(view, {text_block: {"kq_text": "Use the existing cluster"}})
    assert ack.ok, ack.body
    # Told in the modal: by the ack when the bot already knew, else once Kandev said so.
    told = wait_in_form(fake_slack, view.id, "PostgreSQL")
    assert LOST_TO_KANDEV in told.all_text
    assert fake_slack.ephemerals(user=BOB.id) == []

    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == "✅ Answered in Kandev: PostgreSQL"
    assert_terminal_controls(edited)
    final = seed.server.final_status(bundle.task_id, bundle.pending_id)
    assert response_of(final, "db") == {"question_id": "db", "selected_options": ["q1_opt1"]}


def test_two_slack_users_race(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Race")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    barrier = threading.Barrier(2)
    acks: dict[str, object] = {}

    def click(user, label: str) -> None:
        barrier.wait()
        acks[user.id] = driver.click(CHANNEL, card.ts, text=label, user=user)

    threads = [
        threading.Thread(target=click, args=(ALICE, "MongoDB")),
        threading.Thread(target=click, args=(BOB, "PostgreSQL")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert {user: ack.status for user, ack in acks.items()} == {ALICE.id: 200, BOB.id: 200}

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    [chosen] = response_of(final, "db")["selected_options"]
    winner, loser = (ALICE, BOB) if chosen == "q1_opt2" else (BOB, ALICE)
    result = seed.server.agent_result(bundle.task_id, timeout=10)
    assert result is not None and result["tool"]["parsed"] == {"db": {"selected_option": chosen}}

    edited = wait_outcome(fake_slack, card.ts, "✅")
    expected = f"✅ Answered by <@{winner.id}> in Slack: {LABELS[chosen]}"
    fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(CHANNEL, card.ts)) == expected,
        timeout=10,
        description="the winner on the card",
    )
    assert_terminal_controls(edited)
    told = wait_ephemeral(fake_slack, loser.id, "answered first")
    assert told.text.startswith(f"<@{winner.id}> answered first in Slack: {LABELS[chosen]}."), (
        told.text
    )
    assert "Your answer was not sent" in told.text
    fake_slack.settle(quiet=1.0, timeout=10)
    assert fake_slack.ephemerals(user=winner.id) == []
    assert len(fake_slack.ephemerals(user=loser.id)) == 1
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) == expected
    # The card never showed anything but the winner (no "in Kandev" while the race settled).
    shown = {outcome_line(call.params["blocks"]) for call in card_updates(fake_slack, card.ts)}
    assert shown == {expected}


def test_cancelled_bundle_ends_the_card(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Cancelled by an operator")
    card = wait_card(fake_slack, bundle.pending_id)

    assert seed.server.cancel(bundle.pending_id)["status"] == "cancelled"
    edited = wait_outcome(fake_slack, card.ts, "⏹")
    assert outcome_line(edited) == ENDED
    assert_terminal_controls(edited)
    fake_slack.settle(quiet=1.0, timeout=10)
    updates = len(card_updates(fake_slack, card.ts))

    ack = click_stale(slack_driver(bot.events_url), CHANNEL, card.ts, text="PostgreSQL", user=ALICE)
    assert ack.status == 200
    told = wait_ephemeral(fake_slack, ALICE.id, "")
    assert told.channel == CHANNEL
    assert "no longer needs this answer" in told.text and "Nothing was sent" in told.text
    fake_slack.settle(quiet=1.0, timeout=10)
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "cancelled"
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) == ENDED
    assert len(card_updates(fake_slack, card.ts)) == updates
