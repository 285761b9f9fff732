"""Final state of a bundle from its task's clarification messages."""

from datetime import UTC, datetime

import pytest

from kandev_slack.core.clarification import Answer, Bundle, Option, Question
from kandev_slack.kandev.conversation import (
    ConversationPage,
    as_bundle,
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


def asked(pending_id, question_id, index, total, *, created_at, status="pending"):
    """A message as Kandev writes it for one question of a new bundle (its question whole)."""
    return {
        "id": f"m-{pending_id}-{index}",
        "type": "clarification_request",
        "session_id": "s1",
        "created_at": created_at,
        "updated_at": created_at,
        "metadata": {
            "pending_id": pending_id,
            "question_id": question_id,
            "question_index": index,
            "question_total": total,
            "status": status,
            "context": "Choosing the stack",
            "question": {
                "id": question_id,
                "title": question_id.title(),
                "prompt": f"Which **{question_id}**?",
                "options": [
                    {"option_id": f"q{index + 1}_opt1", "label": "One", "description": "first"},
                    {"option_id": f"q{index + 1}_opt2", "label": "Two", "description": ""},
                ],
            },
        },
    }


def test_a_bundle_is_read_whole_from_the_messages_of_its_questions_as_the_list_shows_it():
    page = ConversationPage.model_validate(
        {
            "messages": [  # newest first, as the bot reads them
                asked("p1", "lang", 1, 2, created_at="2026-12-05T21:50:44.120000001Z"),
                asked("p1", "db", 0, 2, created_at="2026-12-05T21:50:43.790533015Z"),
                asked("p0", "db", 0, 1, created_at="2026-12-05T21:40:00Z", status="answered"),
            ]
        }
    )
    bundle = as_bundle(bundle_messages(page.messages, "p1"), "t1")
    assert bundle == Bundle(
        pending_id="p1",
        task_id="t1",
        session_id="s1",
        created_at=datetime(2026, 12, 5, 21, 50, 43, tzinfo=UTC),  # whole seconds, as listed
        context="Choosing the stack",
        questions=[
            Question(
                question_id=q,
                title=q.title(),
                prompt=f"Which **{q}**?",
                options=[
                    Option(option_id=f"q{n}_opt1", label="One", description="first"),
                    Option(option_id=f"q{n}_opt2", label="Two"),
                ],
            )
            for n, q in ((1, "db"), (2, "lang"))
        ],
    )
    answered = as_bundle(bundle_messages(page.messages, "p0"), "t0")
    assert answered is not None and [q.status for q in answered.questions] == ["answered"]


def test_a_bundle_not_all_written_yet_or_missing_what_the_list_shows_is_none():
    first = asked("p1", "db", 0, 2, created_at="2026-12-05T21:50:43Z")
    assert (
        as_bundle(bundle_messages(ConversationPage(messages=[first]).messages, "p1"), "t") is None
    )
    assert as_bundle([], "t") is None
    for broken in ({"question": None}, {"created_at": None}, {"session_id": ""}):
        whole = bundle_messages(
            ConversationPage.model_validate({"messages": [first]}).messages, "p1"
        )
        one = whole[0].model_copy(update={"question_total": 1, **broken})
        assert as_bundle([one], "t") is None, broken
