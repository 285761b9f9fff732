"""The spec line the harness writes into a task description is what the mock agent reads."""

from tests.kit.harness import mock_agent, option_id, question, sample_questions


def test_spec_line_round_trips_questions_and_context() -> None:
    questions = sample_questions(2, options=3)
    text = "Some task description\n" + mock_agent.spec_line("abc_123", questions, "why: *now*")

    parsed = mock_agent.parse_spec(text)

    assert parsed == ("abc_123", {"questions": questions, "context": "why: *now*"})


def test_what_the_agent_does_once_answered_round_trips() -> None:
    then = [{"tool": "Write the migration", "command": "make"}, {"say": "Done."}]
    line = mock_agent.spec_line("m2", sample_questions(1), then=then)

    parsed = mock_agent.parse_spec(line)

    assert parsed is not None and parsed[1]["then"] == then


def test_text_without_spec_is_ignored() -> None:
    assert mock_agent.parse_spec("You previously asked the user: ...") is None
    assert mock_agent.parse_spec("KANDEV-MOCK-SPEC m1 !!!notbase64") is None


def test_question_builder_matches_the_tool_shape() -> None:
    built = question("db", "Database", "Which one?", ("PostgreSQL", "relational"), ("Mongo", "doc"))

    assert built == {
        "id": "db",
        "title": "Database",
        "prompt": "Which one?",
        "options": [
            {"label": "PostgreSQL", "description": "relational"},
            {"label": "Mongo", "description": "doc"},
        ],
    }
    assert option_id(2, 3) == "q2_opt3"


def test_sse_and_json_replies_are_both_parsed() -> None:
    sse = (
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n'
        'event: message\ndata: {"jsonrpc":"2.0","id":2,"result":{"ok":true}}\n\n'
    )
    messages = mock_agent.parse_messages("text/event-stream", sse)

    assert [m.get("id") for m in messages] == [None, 2]
    assert mock_agent.parse_messages("application/json", '{"id":1}') == [{"id": 1}]
