"""Final state of a bundle from its task's clarification messages."""

from datetime import UTC, datetime

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.conversation import (
    ConversationPage,
    bundle_messages,
    final_state,
    is_complete,
)
from kandev_slack.kandev.errors import KandevProtocolError


def message(
    pending_id, question_id, index, total, status, response=None, type_="clarification_request"
):
    metadata = {
        "pending_id": pending_id,
        "question_id": question_id,
        "question_index": index,
        "question_total": total,
        "status": status,
        "question": {"id": question_id, "options": []},
    }
    if response is not None:
        metadata["response"] = response
    return {"id": f"m-{pending_id}-{index}", "type": type_, "metadata": metadata}


def state(messages, pending_id="p1"):
    page = ConversationPage.model_validate({"messages": messages, "has_more": False, "cursor": "x"})
    return final_state(bundle_messages(page.messages, pending_id))


def test_answered_bundle_gives_the_answers_in_question_order():
    result = state(
        [
            message(
                "p1",
                "lang",
                1,
                2,
                "answered",
                {"question_id": "lang", "selected_options": ["q2_opt1"]},
            ),
            message("p0", "db", 0, 1, "cancelled"),
            message(
                "p1",
                "db",
                0,
                2,
                "answered",
                {"question_id": "db", "selected_options": ["q1_opt2"], "custom_text": "because"},
            ),
        ]
    )
    assert result.status == "answered"
    assert result.answers == [
        Answer(question_id="db", selected_options=["q1_opt2"], custom_text="because"),
        Answer(question_id="lang", selected_options=["q2_opt1"]),
    ]


def test_other_final_statuses():
    for status in ("rejected", "cancelled", "expired", "pending"):
        result = state([message("p1", "db", 0, 1, status)])
        assert (result.status, result.answers) == (status, [])


def test_unknown_when_the_bundle_is_absent_and_other_types_are_ignored():
    assert state([]).status == "unknown"
    assert state([message("p2", "db", 0, 1, "answered")]).status == "unknown"
    assert state([message("p1", "db", 0, 1, "answered", type_="message")]).status == "unknown"


def test_mixed_statuses_resolve_to_the_most_decisive():
    assert (
        state([message("p1", "a", 0, 2, "pending"), message("p1", "b", 1, 2, "cancelled")]).status
        == "cancelled"
    )
    assert (
        state([message("p1", "a", 0, 2, "expired"), message("p1", "b", 1, 2, "rejected")]).status
        == "rejected"
    )


def test_is_complete_counts_distinct_questions():
    page = ConversationPage.model_validate({"messages": [message("p1", "a", 0, 2, "pending")]})
    found = bundle_messages(page.messages, "p1")
    assert not is_complete(found)
    page = ConversationPage.model_validate({"messages": [message("p1", "b", 1, 2, "pending")]})
    assert is_complete(found + bundle_messages(page.messages, "p1"))
    assert not is_complete([])


def test_messages_of_the_bundle_with_statuses_kandev_never_uses_are_unreadable_not_unknown():
    """``unknown`` (the bundle is not in the conversation) makes a card unavailable; messages
    that are there but say nothing Kandev says are "try again"."""
    with pytest.raises(KandevProtocolError):
        state([message("p1", "db", 0, 1, "")])
    with pytest.raises(KandevProtocolError):
        state([message("p1", "db", 0, 1, "resolved-ish")])
    assert state([message("p2", "db", 0, 1, "answered")]).status == "unknown"


def test_the_resolution_time_is_the_earliest_decided_messages_update():
    first = {**message("p1", "db", 0, 2, "rejected"), "updated_at": "2026-12-02T06:03:26.2Z"}
    second = {**message("p1", "os", 1, 2, "rejected"), "updated_at": "2026-12-02T06:03:27Z"}
    found = state([first, second])
    assert found.status == "rejected"
    assert found.responded_at == datetime(2026, 12, 2, 6, 3, 26, 200000, tzinfo=UTC)
    assert state([message("p1", "db", 0, 1, "rejected")]).responded_at is None
