"""The harness drives a real Kandev: these tests prove each helper does what it says."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.kit.harness import (
    KandevServer,
    McpSession,
    SeededBundle,
    Seeder,
    question,
    sample_questions,
)

DB_QUESTION = question(
    "db",
    "Database",
    "Which database should we use?",
    ("PostgreSQL", "Relational, strong consistency"),
    ("MongoDB", "Document store"),
)


def listed(server: KandevServer, bundle: SeededBundle) -> dict | None:
    return next((b for b in server.list_pending() if b["pending_id"] == bundle.pending_id), None)


def test_server_answers_the_api_and_offers_the_mock_agent(kandev: KandevServer) -> None:
    response = httpx.get(f"{kandev.base_url}/api/v1/workspaces", trust_env=False)

    assert response.status_code == 200
    assert kandev.workspace_id in [w["id"] for w in response.json()["workspaces"]]
    agents = kandev.http.get("/agents").json()["agents"]
    # Kandev sometimes also lists a built-in "dynamic" agent (without profiles); ours is there.
    assert "mock-agent" in [a["name"] for a in agents]


def test_one_question_bundle_is_listed_as_asked(kandev: KandevServer, seed: Seeder) -> None:
    bundle = seed([DB_QUESTION], context="We are picking the storage layer.")

    found = listed(kandev, bundle)

    assert found is not None
    assert found["task_id"] == bundle.task_id
    assert found["session_id"] == bundle.session_id
    assert found["context"] == "We are picking the storage layer."
    [asked] = found["questions"]
    assert (asked["question_id"], asked["title"], asked["status"]) == ("db", "Database", "pending")
    assert asked["prompt"] == "Which database should we use?"
    assert asked["options"] == [
        {
            "option_id": "q1_opt1",
            "label": "PostgreSQL",
            "description": "Relational, strong consistency",
        },
        {"option_id": "q1_opt2", "label": "MongoDB", "description": "Document store"},
    ]
    assert kandev.task(bundle.task_id)["workspace_id"] == kandev.workspace_id


def test_three_question_bundle_keeps_order_and_options(kandev: KandevServer, seed: Seeder) -> None:
    questions = [
        question("lang", "Language", "Which language?", ("Go", "fast"), ("Python", "easy")),
        question("ci", "CI", "Which CI?", ("A", "a"), ("B", "b"), ("C", "c")),
        question(
            "license",
            "License",
            "Which **license**?",
            *[(f"L{n}", f"license {n}") for n in range(4)],
        ),
    ]

    bundle = seed(questions, context="")
    found = listed(kandev, bundle)

    assert found is not None
    assert found["context"] == ""
    assert [q["question_id"] for q in found["questions"]] == ["lang", "ci", "license"]
    assert [len(q["options"]) for q in found["questions"]] == [2, 3, 4]
    assert [o["option_id"] for o in found["questions"][1]["options"]] == [
        "q2_opt1",
        "q2_opt2",
        "q2_opt3",
    ]
    assert found["questions"][2]["prompt"] == "Which **license**?"


def test_answer_unblocks_the_agent_with_the_answers(kandev: KandevServer, seed: Seeder) -> None:
    bundle = seed(sample_questions(2), context="two questions")

    response = kandev.answer(bundle.pending_id, {"q1": "q1_opt2", "q2": "my own words"})

    assert response.status_code == 200
    assert response.json()["claimed"] is True
    result = kandev.agent_result(bundle.task_id)
    assert result is not None
    assert result["tool"]["is_error"] is False
    assert result["tool"]["parsed"] == {
        "q1": {"selected_option": "q1_opt2"},
        "q2": {"custom_text": "my own words"},
    }
    assert listed(kandev, bundle) is None
    final = kandev.final_status(bundle.task_id, bundle.pending_id)
    assert final["status"] == "answered"
    assert final["questions"]["q1"]["response"]["selected_options"] == ["q1_opt2"]
    assert final["questions"]["q2"]["response"]["custom_text"] == "my own words"


def test_reject_tells_the_agent_and_is_recorded(kandev: KandevServer, seed: Seeder) -> None:
    bundle = seed([DB_QUESTION])

    response = kandev.reject(bundle.pending_id, "not now")

    assert response.json()["status"] == "rejected"
    result = kandev.agent_result(bundle.task_id)
    assert result is not None
    assert result["tool"]["parsed"]["rejected"] is True
    assert result["tool"]["parsed"]["reject_reason"] == "not now"
    assert kandev.final_status(bundle.task_id, bundle.pending_id)["status"] == "rejected"


def test_cancel_ends_the_bundle_without_a_winner(kandev: KandevServer, seed: Seeder) -> None:
    bundle = seed([DB_QUESTION])

    final = kandev.cancel(bundle.pending_id)

    assert final["status"] == "cancelled"
    assert final["questions"]["db"]["response"] is None
    assert listed(kandev, bundle) is None
    late = kandev.answer(bundle.pending_id, {"db": "q1_opt1"})
    assert late.status_code == 409
    assert late.json()["code"] == "not_active"
    result = kandev.agent_result(bundle.task_id)
    assert result is not None
    assert result["tool"]["is_error"] is True


def test_bundles_are_listed_per_workspace(kandev: KandevServer, seed: Seeder) -> None:
    other = kandev.create_workspace("Harness routing")

    here, there = seed(), seed(workspace_id=other)

    in_other = [b["pending_id"] for b in kandev.list_pending(workspace_id=other)]
    assert in_other == [there.pending_id]
    assert here.pending_id in [b["pending_id"] for b in kandev.list_pending(kandev.workspace_id)]
    assert kandev.task(there.task_id)["workspace_id"] == other


def test_seed_many_and_cleanup_deletes_the_tasks(kandev: KandevServer) -> None:
    seeder = Seeder(kandev)
    bundles = seeder.many(3)

    assert len({b.pending_id for b in bundles}) == 3
    pending = {b["pending_id"] for b in kandev.list_pending()}
    assert {b.pending_id for b in bundles} <= pending

    seeder.cleanup()

    pending = {b["pending_id"] for b in kandev.list_pending()}
    assert not {b.pending_id for b in bundles} & pending
    assert kandev.http.get(f"/tasks/{bundles[0].task_id}").status_code == 404


def test_pending_bundle_survives_a_kandev_restart(
    kandev_factory: Callable[..., KandevServer],
) -> None:
    server = kandev_factory()
    bundle = server.seed_bundle([DB_QUESTION])

    server.stop()
    assert not server.running
    server.start()

    found = listed(server, bundle)
    assert found is not None and found["questions"][0]["status"] == "pending"
    response = server.answer(bundle.pending_id, {"db": "q1_opt1"})
    assert response.status_code == 200 and response.json()["claimed"] is True
    # The agent that asked is gone; Kandev relaunches it and sends the answer as a prompt.
    result = server.agent_result(bundle.task_id, timeout=20)
    assert result is not None
    assert any("q1_opt1" in prompt for prompt in result["prompts"])
    assert server.final_status(bundle.task_id, bundle.pending_id)["status"] == "answered"


def test_auth_server_requires_the_token(kandev_auth: KandevServer) -> None:
    url = f"{kandev_auth.base_url}/api/v1/workspaces"
    token = kandev_auth.token
    assert token is not None and token.startswith("kandev_pat_")

    anonymous = httpx.get(url, trust_env=False)
    with_token = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, trust_env=False)

    assert anonymous.status_code == 401
    assert anonymous.json() == {"error": "authentication required"}
    assert with_token.status_code == 200
    mcp = httpx.post(f"{kandev_auth.base_url}/mcp", json={}, trust_env=False)
    assert mcp.status_code == 401


def test_auth_server_seeds_and_lists_with_the_token(kandev_auth: KandevServer) -> None:
    seeder = Seeder(kandev_auth)
    try:
        bundle = seeder([DB_QUESTION])
        session = McpSession(kandev_auth.base_url, token=kandev_auth.token)
        try:
            page = session.call_tool("list_pending_questions_kandev", {})
        finally:
            session.close()
        assert bundle.pending_id in [b["pending_id"] for b in page["bundles"]]
    finally:
        seeder.cleanup()


@pytest.mark.parametrize("body", ["{", '{"answers":[],"rejected":true,"reject_reason":""}'])
def test_respond_sends_raw_bodies_as_given(kandev: KandevServer, body: str) -> None:
    response = kandev.respond("00000000-0000-0000-0000-000000000000", body)

    assert response.status_code in (400, 404)
