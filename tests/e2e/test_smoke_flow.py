"""The core loop, end to end: a bundle becomes a card; a click answers it in Kandev."""

from __future__ import annotations

from tests.kit.harness import CHANNEL, question


def test_bundle_is_posted_and_a_click_answers_it(bot_factory, seed, fake_slack, slack_driver):
    bot = bot_factory()
    b = seed(
        [
            question(
                "db",
                "Database",
                "Which database should we use?",
                ("PostgreSQL", "Relational"),
                ("MongoDB", "Document store"),
            )
        ],
        context="We need to store *orders*.",
        title="Pick a DB",
    )
    msg = fake_slack.wait_for_message(
        CHANNEL, lambda m: b.pending_id in str(m.metadata), timeout=15
    )
    assert "Pick a DB" in msg.text
    driver = slack_driver(bot.events_url)
    ack = driver.click(CHANNEL, msg.ts, text="MongoDB")
    assert ack.status == 200
    result = seed.server.agent_result(b.task_id, timeout=15)
    assert result is not None, "the agent was not unblocked"
    fake_slack.wait_for(
        lambda: "Answered by" in fake_slack.message(CHANNEL, msg.ts).all_text, timeout=10
    )
