"""Contract: a task's metadata (priority, labels, agent) and its session's messages, as the
Conversation view and routing read them from the real Kandev."""

import pytest

from kandev_slack.kandev.client import KandevClient
from tests.kit.harness import sample_questions

pytestmark = pytest.mark.kandev

TRANSCRIPT = [
    {"say": "I read the **schema** first."},
    {"tool": "npm test", "command": "npm test", "exit": 1, "output": "1 failing"},
    {"say": "One test fails; I need a decision."},
    {"tool": "git status", "command": "git status", "exit": 0},
]


def test_task_carries_priority_labels_and_agent(client, seed):
    bundle = seed(sample_questions(1), labels=["database", "infra"], priority="critical")
    task = client.task(bundle.task_id)
    assert task.priority == "critical"
    assert task.labels == ("database", "infra")  # Kandev sends them JSON-encoded in a string
    assert task.primary_agent_name  # the mock agent profile's name
    plain = seed(sample_questions(1))
    task = client.task(plain.task_id)
    assert task.priority == "medium" and task.labels == ()


def test_session_messages_oldest_first_with_tool_calls(client, seed):
    bundle = seed(sample_questions(1), transcript=TRANSCRIPT, description="Do the *thing*.")
    found = client.session_messages(bundle.session_id)
    assert found.complete
    kinds = [(m.author_type, m.type) for m in found.messages]
    assert kinds[0] == ("user", "message")  # the task's prompt
    assert "Do the *thing*." in found.messages[0].content
    said = [m.content for m in found.messages if m.type == "message" and m.author_type == "agent"]
    assert said[:2] == ["I read the **schema** first.", "One test fails; I need a decision."]
    tools = [m for m in found.messages if m.type.startswith("tool_")]
    assert [t.content for t in tools] == ["npm test", "git status"]
    shell = tools[0].metadata["normalized"]["shell_exec"]
    assert shell["command"] == "npm test" and shell["output"]["exit_code"] == 1
    assert tools[0].metadata["status"] == "error"
    question = [m for m in found.messages if m.type == "clarification_request"]
    assert question and question[-1].metadata["pending_id"] == bundle.pending_id
    stamps = [m.created_at for m in found.messages]
    assert stamps == sorted(stamps)


def test_session_messages_pages_and_limit(kandev, seed):
    steps = [s for n in range(8) for s in ({"say": f"step {n}"}, {"tool": f"t{n}", "exit": 0})]
    bundle = seed(sample_questions(1), transcript=steps)
    with KandevClient(kandev.base_url, kandev.token, timeout=30.0) as client:
        everything = client.session_messages(bundle.session_id, page_size=3)
        assert everything.complete
        whole = client.session_messages(bundle.session_id, page_size=100)
        assert [m.id for m in everything.messages] == [m.id for m in whole.messages]
        last = client.session_messages(bundle.session_id, limit=5, page_size=2)
        assert not last.complete
        assert [m.id for m in last.messages] == [m.id for m in whole.messages[-5:]]


def test_unknown_session_has_no_messages(client, seed):
    found = client.session_messages("00000000-0000-0000-0000-000000000000")
    assert found.messages == () and found.complete
