"""What an agent said next after its question (the first agent message after it), and the
line the page shows under the answered card."""

from __future__ import annotations

from datetime import UTC, datetime

from kandev_slack.kandev.models import SessionMessage
from kandev_slack.preview.going_on import said_next


def message(type_: str, author: str, content: str, pending: str = "") -> SessionMessage:
    metadata = {"pending_id": pending} if pending else None
    return SessionMessage(type=type_, author_type=author, content=content, metadata=metadata)


def test_the_newest_agent_message_after_the_question_is_what_it_said_next() -> None:
    messages = [
        message("message", "agent", "I need to ask the user something."),
        message("clarification_request", "agent", "Which database?", "p-1"),
        message("status", "agent", "running"),
        message("message", "user", "PostgreSQL"),
        message("message", "agent", "Thanks, continuing."),
        message("message", "agent", "Writing the migration."),
    ]
    assert said_next(messages, "p-1") == "Writing the migration."
    assert said_next(messages[:5], "p-1") == "Thanks, continuing."
    assert said_next(messages, "p-2") is None
    assert said_next(messages[:4], "p-1") is None


def test_a_message_begun_before_the_question_is_not_what_it_said_next() -> None:
    """Kandev may list the agent's first text after the question (it grows as the agent
    talks); it was created before it."""
    at = [datetime(2026, 1, 1, 10, 0, s, tzinfo=UTC) for s in range(3)]
    question = message("clarification_request", "agent", "Which database?", "p-1")
    before = message("message", "agent", "I need to ask the user something.")
    after = message("message", "agent", "Thanks! I wrote the migration.")
    messages = [
        question.model_copy(update={"created_at": at[1]}),
        before.model_copy(update={"created_at": at[0]}),
    ]
    assert said_next(messages, "p-1") is None
    messages.append(after.model_copy(update={"created_at": at[2]}))
    assert said_next(messages, "p-1") == "Thanks! I wrote the migration."
