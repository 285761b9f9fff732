"""The people kit drives a real auth-on Kandev: each helper does what it says, with the
person's own token, and refuses bad input before sending anything."""

from __future__ import annotations

import pytest

from tests.kit.harness import (
    Cast,
    KandevHarnessError,
    KandevRefused,
    KandevServer,
    People,
    Permissions,
    Seeder,
    permission_spec,
    sample_questions,
)
from tests.kit.polling import eventually

LS = permission_spec("Run ls", "execute", {"command": "ls", "cwd": "/repo"})


def test_people_need_a_kandev_with_auth(kandev: KandevServer) -> None:
    with pytest.raises(KandevHarnessError, match="auth on"):
        People(kandev)


def test_the_cast_is_who_the_fixture_says(kandev_people: Cast) -> None:
    cast = kandev_people
    people = cast.people

    assert cast.bot.token == cast.server.token
    assert people.me(cast.bot.token)["user"]["role"] == "admin"
    assert [p.display_name for p in cast.everyone] == ["Ana", "Ben", "Cat", "Dan", "Eve"]
    assert [p.email for p in cast.everyone] == [
        f"{n}@example.com" for n in ("ana", "ben", "cat", "dan", "eve")
    ]
    assert all(people.me(p.token)["user"]["id"] == p.user_id for p in cast.everyone)
    assert cast.person(cast.dan.user_id) is cast.dan
    assert cast.person(cast.bot.user_id) is cast.bot
    with pytest.raises(KeyError):
        cast.person("nobody")
    dan_members = people.http(cast.dan).get(f"/workspaces/{cast.dan_ws}/members").json()
    assert {(m["user_id"], m["role"]) for m in dan_members["members"]} == {
        (cast.dan.user_id, "owner"),
        (cast.ana.user_id, "collaborator"),
    }
    assert people.role(cast.bot, cast.eve_ws) == "viewer"
    assert people.role(cast.ana, cast.eve_ws) == "collaborator"
    assert people.role(cast.ben, cast.eve_ws) is None and people.scopes(cast.ben, cast.eve_ws) == []
    assert "token" not in repr(cast.ana) and cast.ana.token not in repr(cast.ana)


def test_bad_input_is_refused_before_anything_is_sent(kandev_people: Cast) -> None:
    cast = kandev_people
    people = cast.people
    cases = [
        (lambda: people.create("not-an-email", "X"), "email"),
        (lambda: people.create("x@example.com", " "), "display name"),
        (lambda: people.create("x@example.com", "X", role="owner"), "role"),
        (lambda: people.mint(cast.cat, ttl_hours=-1), "ttl_hours"),
        (lambda: people.revoke(cast.cat, "kandev_pat_nope"), "personal access token"),
        (lambda: people.add_member(cast.dan_ws, cast.cat, "owner"), "role"),
        (lambda: people.snooze(cast.ben, "anything", "2h"), "snooze duration"),
        (lambda: people.workspace(cast.dan, "  "), "name"),
        (lambda: Seeder(cast.server).by(""), "token"),
    ]
    for call, said in cases:
        with pytest.raises(ValueError, match=said):
            call()
    assert not any(u["email"] == "x@example.com" for u in people.users())


def test_kandev_refusals_carry_the_status(kandev_people: Cast) -> None:
    cast = kandev_people
    people = cast.people

    with pytest.raises(KandevRefused) as duplicate:
        people.create("ana@example.com", "Ana again")
    assert duplicate.value.status == 409 and "already in use" in duplicate.value.text
    with pytest.raises(KandevRefused) as not_owner:
        people.add_member(cast.dan_ws, cast.cat, "viewer", by=cast.ana)
    assert not_owner.value.status == 403
    anas = people.mint(cast.ana)
    with pytest.raises(KandevHarnessError, match="not one of cat@example.com's live tokens"):
        people.revoke(cast.cat, anas)
    people.revoke(cast.ana, anas)
    assert people.me(cast.ana.token)["authenticated"] is True


def test_a_persons_own_workspace_is_prepared_for_seeding_and_members(
    kandev_people: Cast, people_seed: Seeder
) -> None:
    cast = kandev_people
    people = cast.people
    gus = people.fresh("Gus")
    workspace = people.workspace(gus, "Gus's workspace")
    # A fresh member: the cast is shared by the session (cat stays a member of nothing).
    hal = people.fresh("Hal")
    people.add_member(workspace, hal, "viewer")  # by its owner, Gus, by default

    bundles = people_seed.by(gus).many(2, workspace_id=workspace)
    assert {b.workspace_id for b in bundles} == {workspace}
    assert people.role(hal, workspace) == "viewer"
    listed = {b["pending_id"] for b in cast.server.list_pending(token=hal.token)}
    assert {b.pending_id for b in bundles} <= listed
    assert workspace not in {w["id"] for w in cast.server.workspaces()}


def test_a_bundle_seeded_as_a_person_is_read_answered_and_deleted_with_their_token(
    kandev_people: Cast,
) -> None:
    cast = kandev_people
    seeder = Seeder(cast.server)
    bundle = seeder.by(cast.dan)(sample_questions(1), workspace_id=cast.dan_ws)

    assert cast.server.task(bundle.task_id)["workspace_id"] == cast.dan_ws
    assert cast.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
    assert cast.server.answer(bundle.pending_id, {"q1": "q1_opt1"}).status_code == 200
    eventually(
        lambda: cast.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "answered"
    )
    assert seeder.task_ids == [bundle.task_id]

    seeder.cleanup()

    gone = cast.people.http(cast.dan).get(f"/tasks/{bundle.task_id}")
    assert gone.status_code == 404


def test_a_permission_seeded_as_a_person_is_listed_and_resolved_with_their_token(
    kandev_people: Cast, people_seed: Seeder
) -> None:
    cast = kandev_people
    permission = people_seed.by(cast.eve).permission([LS], workspace_id=cast.eve_ws)
    permissions = Permissions(cast.server)

    assert [p["request_id"] for p in permissions.list(permission.task_id)] == [
        permission.request_id
    ]
    result = permissions.resolve(permission, "allow_once")

    assert result["status"] == "resolved"
    resolution = eventually(lambda: permissions.resolution(permission))
    assert resolution["actor_user_id"] == cast.eve.user_id
    assert resolution["source"] == "external_mcp"
    # The bot, a viewer of Eve's workspace, reads the same record.
    by_bot = Permissions(cast.server, cast.bot.token).resolution(permission)
    assert by_bot == resolution


def test_a_member_taken_out_of_a_workspace_no_longer_sees_it(kandev_people: Cast) -> None:
    cast = kandev_people
    people = cast.people
    hal = people.fresh("Hal")
    people.add_member(cast.default_ws, hal, "collaborator")
    assert people.role(hal, cast.default_ws) == "collaborator"

    people.remove_member(cast.default_ws, hal)

    assert people.role(hal, cast.default_ws) is None
    assert people.me(hal.token)["authenticated"] is True  # only the membership went
