"""The Kandev client made for one person's own token (kandev_slack/kandev/client.py: ``me``,
``account``, ``access``, the Needs-you inbox sidecar) against the real Kandev with auth on and
its people (``kandev_people``): whose token it is, what it sees and may do there, what Kandev
refuses, and what it hides in their own inbox."""

from __future__ import annotations

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevAuthError
from kandev_slack.kandev.models import KandevUser, NotFound, Won
from tests.kit.harness import Cast, Seeder, free_port, sample_questions

pytestmark = pytest.mark.kandev

COLLABORATOR = {"session.control", "session.exec", "session.prompt", "task.write", "workspace.read"}


def client_of(cast: Cast, token: str) -> KandevClient:
    return KandevClient(cast.server.base_url, token, timeout=30.0, retry_attempts=1)


def test_account_says_whose_token_it_is_and_refused_once_revoked(kandev_people: Cast) -> None:
    cast = kandev_people
    kim = cast.people.fresh("Kim")
    with client_of(cast, kim.token) as theirs:
        account = theirs.account()
        assert isinstance(account, KandevUser)
        assert (account.id, account.email, account.display_name) == (
            kim.user_id,
            kim.email,
            "Kim",
        )
        cast.people.revoke(kim, kim.token)
        # Kandev answers 200 authenticated:false, not 401: still "refused".
        assert theirs.me() is None
        assert theirs.account() == "refused"
        assert theirs.access() == "refused"
    with client_of(cast, "kandev_pat_00000000_" + "A" * 43) as unknown:
        assert unknown.account() == "refused"
    with KandevClient(f"http://127.0.0.1:{free_port()}", kim.token, retry_attempts=1) as gone:
        assert gone.account() == "unreachable"
        assert gone.access() == "unreachable"


def test_access_is_their_workspaces_with_their_roles_scopes(kandev_people: Cast) -> None:
    cast = kandev_people
    with client_of(cast, cast.ana.token) as ana, client_of(cast, cast.ben.token) as ben:
        seen = ana.access()
        assert isinstance(seen, dict)
        assert {cast.default_ws, cast.dan_ws, cast.eve_ws} <= set(seen)
        assert seen[cast.default_ws].viewer_role == "collaborator"
        assert set(seen[cast.default_ws].scopes) == COLLABORATOR
        bens = ben.access()
        assert isinstance(bens, dict) and set(bens) == {cast.default_ws}
        assert bens[cast.default_ws].scopes == ("workspace.read",)
    with client_of(cast, cast.cat.token) as cat:
        assert cat.access() == {}


def test_access_reads_kandev_anew_not_the_clients_kept_workspace_list(
    kandev_people: Cast,
) -> None:
    """Whoever asks ``access`` keeps it for a while itself (Identities): the client's own
    45-second workspace cache on top would keep a removed member deciding for longer."""
    cast = kandev_people
    lou = cast.people.fresh("Lou")
    cast.people.add_member(cast.default_ws, lou, "collaborator")
    with client_of(cast, lou.token) as theirs:
        assert [w.id for w in theirs.workspaces()] == [cast.default_ws]  # kept by the client
        cast.people.remove_member(cast.default_ws, lou)
        assert theirs.access() == {}


def test_their_answer_is_theirs_and_a_workspace_they_cannot_see_is_not_found(
    kandev_people: Cast, people_seed: Seeder
) -> None:
    cast = kandev_people
    mine = people_seed(sample_questions(1), title="Client: Ana answers")
    private = people_seed.by(cast.eve)(
        sample_questions(1), title="Client: Eve's", workspace_id=cast.eve_ws
    )
    answer = [Answer(question_id="q1", selected_options=["q1_opt1"])]
    with client_of(cast, cast.cat.token) as cat:
        assert isinstance(cat.answer(mine.pending_id, answer), NotFound)
    with client_of(cast, cast.ana.token) as ana:
        assert isinstance(ana.answer(mine.pending_id, answer), Won)
    with client_of(cast, cast.ben.token) as ben:
        assert isinstance(ben.answer(private.pending_id, answer), NotFound)
    revoked = cast.people.fresh("Max")
    cast.people.revoke(revoked, revoked.token)
    with client_of(cast, revoked.token) as dead, pytest.raises(KandevAuthError):
        dead.answer(private.pending_id, answer)


def test_the_inbox_sidecar_hides_an_item_for_them_alone(
    kandev_people: Cast, people_seed: Seeder
) -> None:
    cast = kandev_people
    bundle = people_seed(sample_questions(1), title="Client: snoozed by Ana")
    with client_of(cast, cast.ana.token) as ana, client_of(cast, cast.ben.token) as ben:
        ana.inbox_hide(bundle.pending_id, snooze="1h")
        assert bundle.pending_id in ana.inbox_hidden(cast.default_ws)
        assert bundle.pending_id not in ben.inbox_hidden(cast.default_ws)
        ana.inbox_show(bundle.pending_id)
        ana.inbox_show(bundle.pending_id)  # idempotent
        assert bundle.pending_id not in ana.inbox_hidden(cast.default_ws)
        ben.inbox_hide(bundle.pending_id, snooze=None)  # dismissed
        assert bundle.pending_id in ben.inbox_hidden(cast.default_ws)
        ben.inbox_show(bundle.pending_id)
