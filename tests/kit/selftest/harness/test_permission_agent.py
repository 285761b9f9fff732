"""The stand-in agent asks Kandev for tool permissions as scripted, blocks until answered, and
gives up when told to: proved against a real Kandev."""

from __future__ import annotations

import time

import pytest

from tests.kit.harness import (
    STANDARD_OPTIONS,
    KandevServer,
    McpToolError,
    Permissions,
    Seeder,
    mock_agent,
    permission_spec,
)
from tests.kit.polling import eventually

pytestmark = pytest.mark.kandev

RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo/app"})


def test_spec_line_carries_permission_requests() -> None:
    text = mock_agent.spec_line("m1", [], "", None, [RM])

    parsed = mock_agent.parse_spec(text)

    assert parsed is not None
    assert parsed[1]["permissions"] == [RM]
    assert [o["optionId"] for o in RM["options"]] == [o for o, _, _ in STANDARD_OPTIONS]


def test_request_is_listed_with_the_scripted_action_and_options(
    kandev: KandevServer, seed: Seeder
) -> None:
    seeded = seed.permission([RM])

    listed = seeded.listed
    assert listed["action"]["type"] == "command"
    assert listed["action"]["command"] == "rm -rf build"
    assert listed["action"]["cwd"] == "/repo/app"
    assert [(o["option_id"], o["name"], o["kind"]) for o in listed["options"]] == list(
        STANDARD_OPTIONS
    )


def test_agent_blocks_until_resolved_and_gets_the_chosen_option(
    kandev: KandevServer, seed: Seeder
) -> None:
    seeded = seed.permission([RM])
    permissions = Permissions(kandev)
    time.sleep(0.5)
    assert (kandev.agent_record(seeded.task_id) or {}).get("permissions") == []

    permissions.resolve(seeded, "reject_once")

    [got] = permissions.agent_outcomes(seeded.task_id)
    assert got["outcome"] == {"outcome": "selected", "optionId": "reject_once"}
    assert got["withdrawn"] is False


def test_custom_options_and_several_requests_in_turn(kandev: KandevServer, seed: Seeder) -> None:
    publish = permission_spec(
        "Publish the package",
        "execute",
        {"command": "npm publish"},
        [("opt-yes", "Yes, publish", "allow_once"), ("opt-no", "No", "reject_once")],
    )
    write = permission_spec("Write db/schema.sql", "edit", {"path": "db/schema.sql"})
    permissions = Permissions(kandev)
    first = seed.permission([publish, write])
    assert first.option_ids == ("opt-yes", "opt-no")

    permissions.resolve(first, "opt-yes")
    second = permissions.next(first.task_id, after=[first.request_id])
    assert second.listed["action"]["type"] == "file_write"
    permissions.resolve(second, "allow_always")

    got = permissions.agent_outcomes(first.task_id, 2)
    assert [g["outcome"]["optionId"] for g in got] == ["opt-yes", "allow_always"]


def test_agent_gives_up_after_its_timeout_and_kandev_keeps_listing_it(
    kandev: KandevServer, seed: Seeder
) -> None:
    make = permission_spec("Run make", "execute", {"command": "make"}, timeout=1)
    seeded = seed.permission([make])
    permissions = Permissions(kandev)

    [got] = permissions.agent_outcomes(seeded.task_id, timeout=20.0)

    assert (got["outcome"], got["withdrawn"]) == (None, True)
    assert got["answered_at"] - got["asked_at"] >= 1.0  # it gave up after its timeout
    # Kandev's side of a withdrawn request (contract §5, case G): still listed.
    assert [p["request_id"] for p in permissions.list(seeded.task_id)] == [seeded.request_id]


def test_a_wrong_option_is_refused_and_the_request_stays_answerable(
    kandev: KandevServer, seed: Seeder
) -> None:
    seeded = seed.permission([RM])
    permissions = Permissions(kandev)

    with pytest.raises(McpToolError, match="permission_option_not_offered"):
        permissions.resolve(seeded, "nope")
    try:
        permissions.resolve(seeded, "allow_once")
    except McpToolError as exc:  # seen once on CI (already resolved): say by whom
        told = kandev.agent_record(seeded.task_id)
        shown = [m.get("metadata") for m in permissions.messages(seeded.session_id)]
        raise AssertionError(f"{exc}; the agent's record: {told}; the messages: {shown}") from exc

    [got] = permissions.agent_outcomes(seeded.task_id)
    assert got["outcome"]["optionId"] == "allow_once"


def test_the_turn_ends_after_the_answer_unless_told_to_stay_open(
    kandev: KandevServer, seed: Seeder
) -> None:
    permissions = Permissions(kandev)
    ends = seed.permission([RM])
    open_turn = permission_spec("Run ls", "execute", {"command": "ls"}, end_turn=False)
    stays = seed.permission([open_turn])

    for seeded in (ends, stays):
        permissions.resolve(seeded, "allow_once")
        permissions.agent_outcomes(seeded.task_id)

    eventually(lambda: permissions.session(ends.session_id)["state"] == "WAITING_FOR_INPUT")
    time.sleep(1.0)  # a turn that ended would have left RUNNING within milliseconds
    assert permissions.session(stays.session_id)["state"] == "RUNNING"
    permissions.cancel_turn(stays.session_id)
    eventually(lambda: permissions.session(stays.session_id)["state"] != "RUNNING", timeout=30.0)
