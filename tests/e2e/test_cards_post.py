"""Posting: every bundle becomes exactly one card, promptly, with everything the agent asked.
(A bundle created while the bot was not running: see test_cards_restart.py.)"""

from __future__ import annotations

import time

from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    QUIET_ROW,
    buttons,
    card_posts,
    more_options,
    outcome_line,
    start_bot,
    wait_card,
)
from tests.kit.harness import CHANNEL, question

QUESTIONS = [
    question(
        "db",
        "Database",
        "Which database should we use for **orders**?",
        ("PostgreSQL", "Relational, strong consistency"),
        ("MongoDB", "Document store"),
        ("SQLite", "A file next to the app"),
    ),
    question(
        "queue",
        "Queue",
        "Which queue carries the events?",
        ("Kafka", "Partitioned log"),
        ("RabbitMQ", "Classic broker"),
    ),
    question(
        "deploy",
        "Deploy",
        "Where do we deploy first?",
        ("Staging", "The shared staging cluster"),
        ("Canary", "5% of production"),
        ("Everywhere", "All regions at once"),
        ("Nowhere", "Wait for the review"),
    ),
]
CONTEXT = "We are building the *orders* service; see `docs/orders.md` for the constraints."


def test_multi_question_bundle_is_posted_within_the_poll_interval(app_factory, seed, fake_slack):
    start_bot(app_factory)
    bundle = seed(QUESTIONS, context=CONTEXT, title="Orders service design")
    seeded_at = time.monotonic()
    card = wait_card(fake_slack, bundle.pending_id, timeout=POLL_S + MARGIN_S)
    assert time.monotonic() - seeded_at <= POLL_S + MARGIN_S

    text = card.all_text
    assert "Orders service design" in text
    assert "https://kandev.example.test/t/" + bundle.task_id in text
    assert "Workspace *Default Workspace*" in text
    assert "3 questions, answer all together" in text
    # Kandev's Markdown is rendered as Slack mrkdwn (*italic* -> _italic_, **bold** -> *bold*).
    assert "We are building the _orders_ service; see `docs/orders.md` for the constraints." in text
    for number, spec in enumerate(QUESTIONS, start=1):
        assert f"{number}/3 · {spec['title']}" in text
        # each question bold as a whole, its own bold marks merged in (one glance)
        assert "*" + spec["prompt"].replace("**", "") + "*" in text
        for option in spec["options"]:
            assert f"*{option['label']}* — {option['description']}" in text
    # A multi-question bundle is answered in one modal; no one-click option buttons.
    assert buttons(card) == ["Answer…"] and more_options(card) == QUIET_ROW
    assert outcome_line(card) is None
    # the notification says the questions first, then the task
    assert card.text.startswith(QUESTIONS[0]["prompt"][:20])
    assert card.text.endswith(" — Orders service design")

    fake_slack.settle(quiet=POLL_S + 0.5, timeout=15)
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1
    assert [m.ts for m in fake_slack.messages(CHANNEL)] == [card.ts]
