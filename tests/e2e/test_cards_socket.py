"""The same core flow in Socket Mode: the bot connects to the fake's Socket Mode server, posts the
card through the Web API and receives the click over the WebSocket."""

from __future__ import annotations

from kandev_slack.kits.fakeslack import BOB
from tests.e2e.helpers import (
    assert_terminal_controls,
    buttons,
    card_posts,
    db_question,
    outcome_line,
    response_of,
    skip,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL


def test_post_and_answer_in_socket_mode(bot_factory, seed, fake_slack, slack_driver):
    start_bot(bot_factory, mode="socket")
    assert fake_slack.calls("apps.connections.open"), "the bot never opened a Socket Mode session"
    bundle = seed([db_question()], context="Socket Mode.", title="Over the socket")
    card = wait_card(fake_slack, bundle.pending_id)
    assert buttons(card)[:2] == ["PostgreSQL", "MongoDB"]

    ack = slack_driver(transport="socket").click(CHANNEL, card.ts, text="PostgreSQL", user=BOB)
    assert ack.ok

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    assert response_of(final, "db")["selected_options"] == ["q1_opt1"]
    result = seed.server.agent_result(bundle.task_id, timeout=10)
    assert result is not None and result["tool"]["parsed"] == {"db": {"selected_option": "q1_opt1"}}
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{BOB.id}> in Slack: PostgreSQL"
    assert_terminal_controls(edited)
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1


def test_skip_in_socket_mode(bot_factory, seed, fake_slack, slack_driver):
    start_bot(bot_factory, mode="socket")
    bundle = seed([db_question()], title="Skipped over the socket")
    card = wait_card(fake_slack, bundle.pending_id)
    ack = skip(slack_driver(transport="socket"), CHANNEL, card.ts, user=BOB)
    assert ack.ok
    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "rejected")
    assert final["status"] == "rejected"
    edited = wait_outcome(fake_slack, card.ts, "⏭")
    assert outcome_line(edited) == f"⏭ Skipped by <@{BOB.id}> in Slack"
    assert_terminal_controls(edited)
