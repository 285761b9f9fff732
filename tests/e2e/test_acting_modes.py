"""Acting as them over Socket Mode (the bot as a process, ``people_bot_factory``) and on
PostgreSQL (issue 32, points 3 and 4): the main flows of test_acting_as_them.py and
test_acting_refusals.py — a linked person's click and approval with their token, an account
that cannot see the workspace refused to them alone, a ``required`` route's unlinked person
told to connect with nothing sent — on a Kandev with auth on and its people."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.acting import ALICE, CAT, DORA, Scene, pg_database, quietly, scene
from tests.e2e.helpers import (
    distinct_question,
    outcome_line,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL, Cast, KandevProxy, Seeder, permission_spec

NOT_VISIBLE = "You can't see this task in Kandev"
CONNECT = "here questions are answered with your own Kandev account"
RECONNECT = "Kandev no longer accepts the token you connected"


@pytest.fixture
def people_proxy(kandev_people: Cast) -> Iterator[KandevProxy]:
    kandev_people.server.start()
    proxy = KandevProxy(kandev_people.server.base_url).start()
    yield proxy
    proxy.close()


@pytest.fixture
def pg_url() -> Iterator[str]:
    with pg_database() as url:
        yield url


def main_flow(s: Scene, seed: Seeder, n: int) -> None:
    """Alice (linked to Ana) answers a card and allows an approval: Ana's token both times;
    Cat, whose account sees no workspace, is told alone and the card waits for Alice."""
    cast = s.cast
    bundle = seed([distinct_question(n)], title=f"Modes: a click {n}")
    seeded = seed.permission(
        [permission_spec(f"Run make modes{n}", "execute", {"command": f"make modes{n}"})],
        title=f"Modes: an approval {n}",
    )
    card = wait_card(s.fake, bundle.pending_id)
    approval = wait_card(s.fake, f"perm:{seeded.request_id}")

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=CAT)
    wait_ephemeral(s.fake, CAT.id, NOT_VISIBLE)
    quietly(s.fake)
    assert s.sent_nothing(bundle.pending_id)
    assert outcome_of(s, card.ts) is None

    s.driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    s.driver.click(CHANNEL, approval.ts, text="Allow once", user=ALICE)
    wait_final(cast.server, bundle.task_id, bundle.pending_id, "answered")
    edited = wait_outcome(s.fake, card.ts, f"✅ Answered by <@{ALICE.id}>")
    assert (outcome_line(edited) or "").endswith("in Slack: MongoDB")
    wait_outcome(s.fake, approval.ts, f"✅ Allowed once by <@{ALICE.id}>")
    assert s.bearers(bundle.pending_id) == [s.as_(cast.ana)]
    resolution = cast.people.resolution(seeded)
    assert resolution is not None and resolution["actor_user_id"] == cast.ana.user_id
    assert s.bearers(f"perm:{seeded.request_id}") == [s.as_(cast.ana)]
    assert [e.user for e in s.fake.ephemerals()] == [CAT.id]  # only Cat was told anything


def outcome_of(s: Scene, ts: str) -> str | None:
    return outcome_line(s.fake.message(CHANNEL, ts))


def test_over_socket_mode_a_linked_person_acts_with_their_token(
    people_bot_factory, kandev_people, fake_slack, slack_driver, tmp_path, people_proxy, people_seed
) -> None:
    s = scene(
        people_bot_factory,
        kandev_people,
        fake_slack,
        slack_driver,
        tmp_path,
        people_proxy,
        mode="socket",
    )
    s.link(ALICE, kandev_people.ana)
    s.link(CAT, kandev_people.cat)
    main_flow(s, people_seed, 61)


def test_over_socket_mode_a_required_route_sends_nothing_for_an_unlinked_person(
    people_bot_factory, kandev_people, fake_slack, slack_driver, tmp_path, people_proxy, people_seed
) -> None:
    s = scene(
        people_bot_factory,
        kandev_people,
        fake_slack,
        slack_driver,
        tmp_path,
        people_proxy,
        mode="socket",
        identity="required",
    )
    bundle = people_seed([distinct_question(62)], title="Modes: required over the socket")
    card = wait_card(s.fake, bundle.pending_id)

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=DORA)

    wait_ephemeral(s.fake, DORA.id, CONNECT)
    quietly(s.fake)
    assert s.sent_nothing(bundle.pending_id)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    assert outcome_of(s, card.ts) is None
    with s.store() as store:
        parked = store.links.take_parked_click(DORA.id, 600)
    assert parked is not None and parked[0] == bundle.pending_id


def test_on_postgresql_a_linked_person_acts_with_their_token(
    people_app_factory,
    kandev_people,
    fake_slack,
    slack_driver,
    tmp_path,
    people_proxy,
    people_seed,
    pg_url,
) -> None:
    s = scene(
        people_app_factory,
        kandev_people,
        fake_slack,
        slack_driver,
        tmp_path,
        people_proxy,
        db_url=pg_url,
    )
    s.link(ALICE, kandev_people.ana)
    s.link(CAT, kandev_people.cat)
    main_flow(s, people_seed, 63)


def test_on_postgresql_a_revoked_token_breaks_the_link_and_a_required_route_parks(
    people_app_factory,
    kandev_people,
    fake_slack,
    slack_driver,
    tmp_path,
    people_proxy,
    people_seed,
    pg_url,
) -> None:
    cast = kandev_people
    s = scene(
        people_app_factory,
        cast,
        fake_slack,
        slack_driver,
        tmp_path,
        people_proxy,
        db_url=pg_url,
        identity="required",
    )
    nia = cast.people.fresh("Nia")
    cast.people.add_member(cast.default_ws, nia, "collaborator")
    s.link(ALICE, nia)
    cast.people.revoke(nia, nia.token)
    bundle = people_seed([distinct_question(64)], title="Modes: revoked on PostgreSQL")
    card = wait_card(s.fake, bundle.pending_id)

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=ALICE)
    wait_ephemeral(s.fake, ALICE.id, RECONNECT)
    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=DORA)
    wait_ephemeral(s.fake, DORA.id, CONNECT)

    quietly(s.fake)
    link = s.link_of(ALICE)
    assert link is not None and link.broken
    assert s.sent_nothing(bundle.pending_id)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    assert outcome_of(s, card.ts) is None
    with s.store() as store:
        parked = store.links.take_parked_click(DORA.id, 600)
    assert parked is not None and parked[0] == bundle.pending_id
