"""Contract: tool-permission requests on the real Kandev (kandev-permissions.md) give the
documented typed outcomes through ``KandevClient.permissions``."""

from __future__ import annotations

import queue
import threading
from datetime import UTC, datetime, timedelta

import pytest

from kandev_slack.kandev.approvals.outcomes import (
    AuthRefused,
    OptionNotOffered,
    PermissionLost,
    PermissionWithdrawn,
    PermissionWon,
    TaskOrSessionGone,
)
from kandev_slack.kandev.approvals.wire import PermissionChoice, PermissionRequest
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevAuthError, KandevNotFoundError
from kandev_slack.kandev.hints import KandevHints, PermissionWaiting
from tests.kit.harness import Permissions, Seeder, permission_spec
from tests.kit.polling import eventually

pytestmark = pytest.mark.kandev

UNKNOWN_ID = "00000000-0000-0000-0000-000000000000"
RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo/app"})


def listed_request(client, seeded) -> PermissionRequest:
    [request] = client.permissions.list_pending(seeded.task_id, seeded.session_id)
    return request


def test_a_request_is_listed_with_its_ids_options_and_redacted_action(client, seed):
    fetch = permission_spec(
        "Fetch https://example.com/api?token=SECRET123",
        "fetch",
        {"url": "https://example.com/api?token=SECRET123"},
    )
    seeded = seed.permission([fetch])

    request = listed_request(client, seeded)

    assert (request.request_id, request.pending_id) == (seeded.request_id, seeded.pending_id)
    assert request.action.type == "network"
    assert request.action.destination == "https://example.com/api"
    assert "SECRET123" not in request.model_dump_json()
    assert [o.option_id for o in request.options] == list(seeded.option_ids)
    assert [o.always for o in request.options] == [False, True, False, True]
    assert client.permissions.list_pending(UNKNOWN_ID) == []
    with pytest.raises(KandevNotFoundError):
        client.permissions.list_pending(seeded.task_id, "not-a-uuid")


def test_resolve_wins_the_agent_gets_the_option_and_the_transcript_says_so(kandev, client, seed):
    seeded = seed.permission([RM])
    request = listed_request(client, seeded)

    outcome = client.permissions.resolve(request.choose("allow_always"))

    assert outcome == PermissionWon("allow_always", "allow_always")
    [got] = Permissions(kandev).agent_outcomes(seeded.task_id)
    assert got["outcome"] == {"outcome": "selected", "optionId": "allow_always"}

    def approved():
        record = client.permissions.record(seeded.task_id, seeded.session_id, seeded.request_id)
        return record if record is not None and record.status == "approved" else None

    record = eventually(approved)
    assert record.resolution is not None
    assert (record.resolution.option_id, record.resolution.source) == (
        "allow_always",
        "external_mcp",
    )
    assert client.permissions.list_pending(seeded.task_id) == []


def test_a_loser_gets_the_winners_choice_from_the_transcript(kandev, client, seed):
    seeded = seed.permission([RM])
    request = listed_request(client, seeded)
    Permissions(kandev).resolve(seeded, "reject_once")  # another MCP client wins

    outcome = client.permissions.resolve(request.choose("allow_once"))

    assert isinstance(outcome, PermissionLost) and outcome.winner is not None
    assert outcome.winner.option_id == "reject_once"
    [got] = Permissions(kandev).agent_outcomes(seeded.task_id)
    assert got["outcome"]["optionId"] == "reject_once"


def test_our_own_retry_after_a_lost_reply_is_recognised_as_our_win(client, seed):
    seeded = seed.permission([RM])
    request = listed_request(client, seeded)
    first_sent = datetime.now(UTC) - timedelta(seconds=0.5)
    assert isinstance(client.permissions.resolve(request.choose("allow_once")), PermissionWon)

    again = client.permissions.resolve(
        request.choose("allow_once"), resend=True, first_sent=first_sent
    )

    assert again == PermissionWon("allow_once", "allow_once", settled=True)


def test_an_option_not_offered_leaves_the_request_answerable(client, seed):
    seeded = seed.permission([RM])
    request = listed_request(client, seeded)

    refused = client.permissions.resolve(request.choose("nope"))

    assert isinstance(refused, OptionNotOffered)
    assert listed_request(client, seeded).request_id == seeded.request_id
    assert isinstance(client.permissions.resolve(request.choose("reject_always")), PermissionWon)


def test_stale_and_unknown_requests_are_withdrawn_and_a_foreign_session_is_gone(client, seed):
    seeded = seed.permission([RM])
    other = seed.permission([RM], title="Harness: another permission")
    request = listed_request(client, seeded)
    ids = request.choose("allow_once").model_dump()

    stale = client.permissions.resolve(PermissionChoice(**{**ids, "request_id": UNKNOWN_ID}))
    unknown = client.permissions.resolve(PermissionChoice(**{**ids, "pending_id": "nope"}))
    foreign = client.permissions.resolve(
        PermissionChoice(**{**ids, "session_id": other.session_id})
    )

    assert isinstance(stale, PermissionWithdrawn)
    assert isinstance(unknown, PermissionWithdrawn)
    assert isinstance(foreign, TaskOrSessionGone)
    assert listed_request(client, seeded).request_id == seeded.request_id


def test_a_cancelled_turn_leaves_its_request_listed_but_moves_the_sessions_revision(
    kandev, client, seed
):
    """Kandev's bug (contract §5): after ``agent.cancel`` the request stays listed and
    "resolvable" (resolving it would wedge the session); the session's cancellation
    revision is what tells it apart. Not resolved here, on purpose."""
    seeded = seed.permission([RM])
    before = client.permissions.cancellation(seeded.session_id)
    assert before is not None and before.revision == 0

    Permissions(kandev).cancel_turn(seeded.session_id)

    def moved():
        now = client.permissions.cancellation(seeded.session_id)
        return now if now is not None and now.revision > before.revision else None

    eventually(moved, timeout=20.0)
    assert listed_request(client, seeded).request_id == seeded.request_id
    assert client.permissions.cancellation(UNKNOWN_ID) is None


def test_a_cancelled_turn_is_over_in_the_session_s_turns_while_its_request_stays_listed(
    kandev, client, seed
):
    """What the bot reads at post time, on sweeps and before a click: the turn that asked
    has ``completed_at`` once cancelled, whatever revision was seen (v0.95.1, observed)."""
    seeded = seed.permission([RM])
    request = listed_request(client, seeded)
    assert client.permissions.turn_ended(seeded.session_id, request.created_at) is False

    Permissions(kandev).cancel_turn(seeded.session_id)

    eventually(lambda: client.permissions.turn_ended(seeded.session_id, request.created_at))
    assert listed_request(client, seeded).request_id == seeded.request_id
    # An unknown session lists no turns (auth off): nothing is known to have ended there; a
    # session gone is told by its own read (cancellation: None), which the bot makes first.
    assert client.permissions.turn_ended(UNKNOWN_ID, request.created_at) is False


def test_the_sweep_finds_the_task_and_confirms_it_with_its_list(kandev, client, seed):
    seeded = seed.permission([RM])
    question = seed()  # a clarification's task is not a candidate

    found = client.permissions.candidates(seeded.workspace_id, page_size=1)

    assert (seeded.task_id, seeded.session_id) in [(c.task_id, c.session_id) for c in found]
    assert question.task_id not in [c.task_id for c in found]
    assert listed_request(client, seeded).request_id == seeded.request_id


def test_the_push_hint_names_the_task_and_session_of_a_new_request(kandev, seed):
    waiting: queue.Queue[PermissionWaiting] = queue.Queue()
    connected = threading.Event()
    hints = KandevHints(
        kandev.base_url,
        kandev.token,
        lambda hint: None,
        lambda hint: None,
        connected.set,
        on_permission=waiting.put,
    )
    hints.start()
    try:
        assert connected.wait(15.0)
        seeded = seed.permission([RM])
        hint = waiting.get(timeout=15.0)
        while hint.task_id != seeded.task_id:
            hint = waiting.get(timeout=15.0)
    finally:
        hints.stop()

    assert (hint.session_id, hint.workspace_id) == (seeded.session_id, seeded.workspace_id)


def test_exactly_one_of_parallel_resolves_wins_across_mcp_and_the_web_ui(kandev, client, seed):
    seeded = seed.permission([RM])
    request = listed_request(client, seeded)
    options = ["allow_once", "reject_once", "allow_always"]
    results: dict[str, object] = {}
    start = threading.Barrier(len(options) + 1)

    def ours(option: str) -> None:
        start.wait()
        results[option] = client.permissions.resolve(request.choose(option))

    def web() -> None:
        start.wait()
        arguments = seeded.resolve_arguments("reject_always")
        results["web"] = Permissions(kandev).ws_request("permission.respond", arguments)

    threads = [threading.Thread(target=ours, args=(o,)) for o in options]
    threads.append(threading.Thread(target=web))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30.0)

    [got] = Permissions(kandev).agent_outcomes(seeded.task_id)
    delivered = got["outcome"]["optionId"]
    won = [o for o in options if isinstance(results[o], PermissionWon)]
    web_won = bool((results["web"] or {}).get("success"))
    assert len(won) + web_won == 1, results
    assert delivered == (won[0] if won else "reject_always")
    for option in options:
        outcome = results[option]
        if isinstance(outcome, PermissionLost) and outcome.winner is not None:
            assert outcome.winner.option_id == delivered
        else:
            assert isinstance(outcome, PermissionWon | PermissionLost), outcome


def test_a_stopped_agents_request_is_withdrawn(kandev, client, seed):
    seeded = seed.permission([RM])
    request = listed_request(client, seeded)

    Permissions(kandev).stop_agent(seeded.session_id)

    eventually(lambda: client.permissions.list_pending(seeded.task_id) == [], timeout=20.0)
    outcome = client.permissions.resolve(request.choose("allow_once"))
    assert isinstance(outcome, PermissionWithdrawn)
    record = client.permissions.record(seeded.task_id, seeded.session_id, seeded.request_id)
    assert record is not None and record.withdrawn


def test_requests_do_not_survive_a_kandev_restart_though_the_task_still_says_permission(
    kandev_factory,
):
    server = kandev_factory()
    seeder = Seeder(server)
    try:
        seeded = seeder.permission([RM])
        with KandevClient(server.base_url, server.token, timeout=30.0) as client:
            request = listed_request(client, seeded)
            server.restart()

            stale = client.permissions.candidates(seeded.workspace_id)
            assert seeded.task_id in [c.task_id for c in stale]  # a hint to confirm, §2
            assert client.permissions.list_pending(seeded.task_id) == []
            outcome = client.permissions.resolve(request.choose("allow_once"))
            assert isinstance(outcome, PermissionWithdrawn)
    finally:
        seeder.cleanup()
        server.close()


def test_behind_auth_the_token_lists_and_resolves_and_a_bad_one_is_refused(kandev_auth, seed_auth):
    seeded = seed_auth.permission([RM])
    with KandevClient(kandev_auth.base_url, "kandev_pat_wrong", timeout=30.0) as wrong:
        assert isinstance(wrong.permissions.resolve(_choice(seeded, "allow_once")), AuthRefused)
        with pytest.raises(KandevAuthError):
            wrong.permissions.list_pending(seeded.task_id)
    with KandevClient(kandev_auth.base_url, kandev_auth.token, timeout=30.0) as client:
        request = listed_request(client, seeded)
        assert isinstance(client.permissions.resolve(request.choose("allow_once")), PermissionWon)
        record = eventually(
            lambda: client.permissions.record(seeded.task_id, seeded.session_id, seeded.request_id)
        )
    assert record.resolution is not None
    assert record.resolution.actor_kind == "personal_access_token"


def _choice(seeded, option: str) -> PermissionChoice:
    return PermissionChoice(**seeded.resolve_arguments(option))
