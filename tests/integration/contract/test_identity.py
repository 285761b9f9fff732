"""Contract: what the bot relies on when each Slack person acts with their own Kandev token
(kandev-identity.md), on a Kandev with auth and the Needs-you inbox on and several people made
through its own API (``kandev_people``: the bot is the harness's admin; ana, ben, cat, dan, eve).
Raw wire calls through the kit, on purpose: this is Kandev as it is."""

from __future__ import annotations

import pytest

from kandev_slack.kandev.client import KandevClient
from tests.kit.harness import (
    Cast,
    KandevRefused,
    Permissions,
    Seeder,
    permission_spec,
    sample_questions,
)
from tests.kit.polling import eventually

pytestmark = pytest.mark.kandev

PUBLISH = permission_spec("Run npm publish", "execute", {"command": "npm publish", "cwd": "/repo"})
COLLABORATOR_SCOPES = {
    "session.control",
    "session.exec",
    "session.prompt",
    "task.write",
    "workspace.read",
}


def pending_ids(cast: Cast, token: str) -> set[str]:
    return {b["pending_id"] for b in cast.server.list_pending(token=token)}


def inbox_ids(inbox: dict) -> set[str]:
    return {b["pending_id"] for b in inbox["bundles"]}


def test_me_says_who_a_live_token_is_and_not_authenticated_once_revoked(kandev_people: Cast):
    people, cat = kandev_people.people, kandev_people.cat
    token = people.mint(cat, ttl_hours=2)

    me = people.me(token)
    assert me["mode"] == "enabled" and me["authenticated"] is True
    assert (me["user"]["id"], me["user"]["email"]) == (cat.user_id, "cat@example.com")
    assert me["user"]["display_name"] == "Cat"
    [record] = [t for t in people.tokens(cat) if token.startswith(f"kandev_pat_{t['prefix']}_")]
    assert record["expires_at"] is not None

    people.revoke(cat, token)

    assert people.me(token) == {"mode": "enabled", "authenticated": False}
    refused = people.server.http_as(token).get("/workspaces")
    assert refused.status_code == 401
    assert refused.json() == {"error": "authentication required"}
    assert people.me(cat.token)["authenticated"] is True  # only that token died


def test_a_disabled_persons_token_is_dead_and_stays_dead_when_enabled_again(kandev_people: Cast):
    people = kandev_people.people
    fay = people.fresh("Fay")
    assert people.me(fay.token)["authenticated"] is True

    people.disable(fay)
    assert people.me(fay.token)["authenticated"] is False
    people.enable(fay)

    assert people.me(fay.token)["authenticated"] is False
    assert people.me(people.login_and_mint(fay.email, fay.password))["user"]["id"] == fay.user_id


def test_only_a_persons_own_token_acts_as_them(kandev_people: Cast):
    people, ben = kandev_people.people, kandev_people.ben
    assert people.me(kandev_people.bot.token)["user"]["id"] == kandev_people.bot.user_id
    minted = people.server.http.post(
        "/auth/tokens", json={"name": "for ben?", "ttl_hours": 1, "user_id": ben.user_id}
    )
    assert minted.status_code == 201
    assert minted.json()["record"]["user_id"] == kandev_people.bot.user_id
    users = {u["id"]: u for u in people.users()}
    assert users[ben.user_id]["email"] == "ben@example.com"
    assert users[ben.user_id]["display_name"] == "Ben"


def test_a_bundle_in_dans_workspace_is_unknown_to_ben_and_the_bot_and_visible_to_ana(
    kandev_people: Cast, people_seed: Seeder
):
    cast = kandev_people
    bundle = people_seed.by(cast.dan)(sample_questions(1), workspace_id=cast.dan_ws)

    refused = cast.people.answer_as(cast.ben, bundle.pending_id, {"q1": "q1_opt1"})
    assert refused.status_code == 404
    assert refused.json() == {"error": "clarification request not found"}
    assert bundle.pending_id not in pending_ids(cast, cast.bot.token)
    assert bundle.pending_id not in pending_ids(cast, cast.ben.token)
    with pytest.raises(KandevRefused) as foreign:
        cast.people.inbox(cast.ben, cast.dan_ws)
    assert foreign.value.status == 404

    assert bundle.pending_id in pending_ids(cast, cast.ana.token)
    assert bundle.pending_id in inbox_ids(cast.people.inbox(cast.ana, cast.dan_ws))
    answered = cast.people.answer_as(cast.ana, bundle.pending_id, {"q1": "q1_opt2"})
    assert answered.status_code == 200 and answered.json()["claimed"] is True
    status = eventually(lambda: cast.server.final_status(bundle.task_id, bundle.pending_id))
    assert status["status"] == "answered"
    assert status["questions"]["q1"]["response"]["selected_options"] == ["q1_opt2"]


def test_a_viewer_has_only_read_scope_and_a_collaborator_may_prompt(kandev_people: Cast):
    cast = kandev_people
    people = cast.people

    assert people.role(cast.ben, cast.default_ws) == "viewer"
    assert people.scopes(cast.ben, cast.default_ws) == ["workspace.read"]
    assert people.role(cast.ana, cast.default_ws) == "collaborator"
    assert set(people.scopes(cast.ana, cast.default_ws)) == COLLABORATOR_SCOPES
    assert "session.prompt" in people.scopes(cast.ana, cast.dan_ws)
    assert people.role(cast.dan, cast.dan_ws) == "owner"
    assert people.workspaces(cast.cat) == []
    assert {w["id"] for w in people.workspaces(cast.ana)} == {
        cast.default_ws,
        cast.dan_ws,
        cast.eve_ws,
    }


def test_a_snooze_or_dismissal_hides_a_bundle_only_for_that_person(
    kandev_people: Cast, people_seed: Seeder
):
    cast = kandev_people
    people = cast.people
    bundle = people_seed(sample_questions(1), title="Per-person inbox")
    assert bundle.pending_id in inbox_ids(people.inbox(cast.ben, cast.default_ws))

    people.snooze(cast.ben, bundle.pending_id, "1h")
    try:
        ben = people.inbox(cast.ben, cast.default_ws)
        assert bundle.pending_id not in inbox_ids(ben)
        assert ben["hidden_count"] >= 1 and ben["next_snooze_expiry"]
        [hidden] = [
            b
            for b in people.hidden(cast.ben, cast.default_ws)["bundles"]
            if b["pending_id"] == bundle.pending_id
        ]
        assert hidden["state"] == "snoozed" and hidden["snooze_until"]
        assert bundle.pending_id in inbox_ids(people.inbox(cast.ana, cast.default_ws))
        assert bundle.pending_id in pending_ids(cast, cast.ben.token)  # MCP ignores sidecars
    finally:
        people.unsnooze(cast.ben, bundle.pending_id)
    assert bundle.pending_id in inbox_ids(people.inbox(cast.ben, cast.default_ws))
    people.unsnooze(cast.ben, bundle.pending_id)  # idempotent

    people.dismiss(cast.ana, bundle.pending_id)
    assert bundle.pending_id not in inbox_ids(people.inbox(cast.ana, cast.default_ws))
    assert bundle.pending_id in inbox_ids(people.inbox(cast.ben, cast.default_ws))
    people.unsnooze(cast.ana, bundle.pending_id)
    assert bundle.pending_id in inbox_ids(people.inbox(cast.ana, cast.default_ws))


def test_a_permission_allowed_by_ana_in_the_web_ui_is_recorded_as_hers(
    kandev_people: Cast, people_seed: Seeder
):
    cast = kandev_people
    permission = people_seed.permission([PUBLISH])

    reply = cast.people.allow_as(cast.ana, permission, "allow_once")

    assert reply["success"] is True
    resolution = eventually(lambda: cast.people.resolution(permission))
    assert resolution["actor_user_id"] == cast.ana.user_id
    assert resolution["actor_kind"] == "personal_access_token"
    assert (resolution["source"], resolution["option_id"]) == ("web", "allow_once")
    [got] = Permissions(cast.server).agent_outcomes(permission.task_id)
    assert got["outcome"] == {"outcome": "selected", "optionId": "allow_once"}


def test_a_permission_in_dans_workspace_is_not_found_for_ben(
    kandev_people: Cast, people_seed: Seeder
):
    cast = kandev_people
    permission = people_seed.by(cast.dan).permission([PUBLISH], workspace_id=cast.dan_ws)

    with pytest.raises(KandevRefused) as refused:
        cast.people.allow_as(cast.ben, permission, "allow_once")

    assert refused.value.code == "NOT_FOUND"
    cast.people.allow_as(cast.dan, permission, "reject_once")
    resolution = eventually(lambda: cast.people.resolution(permission))
    assert resolution["actor_user_id"] == cast.dan.user_id
    assert resolution["option_id"] == "reject_once"


def test_the_assignee_is_set_shown_and_cleared(kandev_people: Cast, people_seed: Seeder):
    cast = kandev_people
    people = cast.people
    bundle = people_seed(sample_questions(1), title="Who takes it")
    # Unset, the key is left out of the task (kandev-identity.md §5 says null).
    assert "assignee_user_id" not in cast.server.task(bundle.task_id)

    assigned = people.assign(bundle.task_id, cast.ben, by=cast.ana)

    assert assigned["assignee_user_id"] == cast.ben.user_id
    assert cast.server.task(bundle.task_id)["assignee_user_id"] == cast.ben.user_id
    with pytest.raises(KandevRefused) as unreachable:
        people.assign(bundle.task_id, cast.cat)
    assert unreachable.value.status == 400
    assert "cannot see this workspace" in unreachable.value.text
    with pytest.raises(KandevRefused) as viewer:
        people.assign(bundle.task_id, cast.ana, by=cast.ben)
    assert viewer.value.status == 403
    people.assign(bundle.task_id, None)
    assert "assignee_user_id" not in cast.server.task(bundle.task_id)


def test_the_bot_sees_its_workspaces_only_and_eves_as_a_viewer(kandev_people: Cast):
    cast = kandev_people
    seen = {w["id"]: w for w in cast.server.workspaces()}

    assert cast.dan_ws not in seen
    assert cast.default_ws in seen and seen[cast.default_ws]["viewer_role"] == "owner"
    assert seen[cast.eve_ws]["viewer_role"] == "viewer"
    assert seen[cast.eve_ws]["scopes"] == ["workspace.read"]
    assert seen[cast.eve_ws]["owner_id"] == cast.eve.user_id
    missing = cast.server.http.get(f"/workspaces/{cast.dan_ws}")
    assert missing.status_code == 404


def test_the_bot_names_every_account_as_admin_and_a_member_reads_the_directory(
    kandev_people: Cast,
):
    """Attribution's names (KandevClient.user_names): an admin's token lists every user; a
    member's is refused there (403) and reads the directory, ids and display names only."""
    cast = kandev_people
    member = cast.server.http_as(cast.cat.token).get("/users")
    assert member.status_code == 403
    directory = cast.server.http_as(cast.cat.token).get("/users/directory").json()
    assert {"id", "display_name"} <= set(directory["users"][0])
    assert "email" not in directory["users"][0]

    with KandevClient(cast.server.base_url, cast.bot.token, timeout=30.0) as admin:
        as_admin = admin.user_names()
    with KandevClient(cast.server.base_url, cast.cat.token, timeout=30.0) as cat:
        as_member = cat.names()

    for names in (as_admin, as_member):
        assert isinstance(names, dict)
        assert [names[p.user_id] for p in cast.everyone] == ["Ana", "Ben", "Cat", "Dan", "Eve"]
        assert names[cast.bot.user_id] == cast.bot.display_name
    with KandevClient(cast.server.base_url, "kandev_pat_00000000_" + "x" * 43) as nobody:
        assert nobody.names() == "refused"


def test_the_client_reads_a_tasks_assignee_and_nothing_when_unset(
    kandev_people: Cast, people_seed: Seeder
):
    cast = kandev_people
    bundle = people_seed(sample_questions(1), title="Whose is it")
    with KandevClient(cast.server.base_url, cast.bot.token, timeout=30.0, cache_ttl=0) as bot:
        assert bot.assignee(bundle.task_id) == ""
        cast.people.assign(bundle.task_id, cast.ana)
        assert bot.assignee(bundle.task_id) == cast.ana.user_id
        assert bot.task(bundle.task_id).assignee_user_id == cast.ana.user_id
        assert bot.assignee("no-such-task") is None
