"""Kandev's replies about the person who clicked (issue 32, points 3 and 4), end to end on a
Kandev with auth on and its people (``kandev_people``), the bot in this process:

- an account that cannot see the task's workspace: "You can't see this task in Kandev", to
  them alone; the card stays as it is and others still answer it — refused before sending
  (their workspaces read), and after (their membership removed once their workspaces were
  read: Kandev answers 404 and the bot's own read says the item still waits);
- a revoked token: their link is marked broken, they are asked to reconnect, nothing is
  recorded in Kandev, the card is unchanged — before sending and after (a 401 to the call);
- a viewer: refused "viewers can't answer in Kandev" before anything is sent;
- the route's ``answerers`` apply on top of a linked account;
- a ``required`` route: an unlinked person is told privately to connect, nothing reaches
  Kandev (the item still waits there), and their click is parked in the store.

"Nothing sent" is read at the recording proxy in front of Kandev (no answer call at all) and in
Kandev (still pending)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kandev_slack.kits.fakeslack import SlackUser
from tests.e2e.acting import ALICE, BOB, CAT, DORA, Scene, quietly, scene
from tests.e2e.helpers import (
    act,
    distinct_question,
    open_modal,
    outcome_line,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL, Cast, KandevProxy, Seeder, bearer_of, permission_spec

NOT_VISIBLE = "You can't see this task in Kandev"
RECONNECT = "Kandev no longer accepts the token you connected"
VIEWER = "viewers can't answer in Kandev"
VIEWER_APPROVAL = "viewers can't approve in Kandev"
CONNECT = "here questions are answered with your own Kandev account"
OTHER_MODAL = "kq_other_modal"


@pytest.fixture
def people_proxy(kandev_people: Cast) -> Iterator[KandevProxy]:
    kandev_people.server.start()
    proxy = KandevProxy(kandev_people.server.base_url).start()
    yield proxy
    proxy.close()


@pytest.fixture
def make_scene(people_app_factory, kandev_people, fake_slack, slack_driver, tmp_path, people_proxy):
    def made(**options) -> Scene:
        return scene(
            people_app_factory,
            kandev_people,
            fake_slack,
            slack_driver,
            tmp_path,
            people_proxy,
            **options,
        )

    return made


def only_told(s: Scene, user: SlackUser, contains: str) -> None:
    """``user`` was told ``contains`` privately, and nobody else was told anything."""
    told = wait_ephemeral(s.fake, user.id, contains)
    assert told.channel == CHANNEL
    others = [e for e in s.fake.ephemerals() if e.user != user.id]
    assert others == [], [(e.user, e.text) for e in others]


def open_form(s: Scene, ts: str, user: SlackUser) -> None:
    """``user`` opens the card's "Other answer…" form (admitted: their workspaces are read)
    and leaves it."""
    mark = s.fake.mark()
    s.driver.click(CHANNEL, ts, text="Other answer…", user=user)
    open_modal(s.fake, OTHER_MODAL, after=mark)


def test_an_account_that_cannot_see_the_workspace_is_refused_before_sending(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene()
    cast = s.cast
    s.link(CAT, cast.cat)  # Cat's account is in no workspace
    s.link(ALICE, cast.ana)
    bundle = people_seed([distinct_question(41)], title="Refusals: Cat cannot see it")
    card = wait_card(s.fake, bundle.pending_id)
    edits = s.edits(card.ts)

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=CAT)

    only_told(s, CAT, NOT_VISIBLE)
    quietly(s.fake)
    assert s.sent_nothing(bundle.pending_id)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    assert s.unchanged(card.ts, edits)
    # Still answerable by others.
    s.driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    edited = wait_outcome(s.fake, card.ts, f"✅ Answered by <@{ALICE.id}>")
    assert (outcome_line(edited) or "").endswith("in Slack: MongoDB")
    assert s.bearers(bundle.pending_id) == [s.as_(cast.ana)]


def test_a_question_kandev_hides_from_them_after_their_access_was_read_stays_open(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene()
    cast = s.cast
    fay = cast.people.fresh("Fay")
    cast.people.add_member(cast.default_ws, fay, "collaborator")
    fay_slack = SlackUser(id="U0FAY00005", name="fay")
    s.link(fay_slack, fay)
    s.link(ALICE, cast.ana)
    bundle = people_seed([distinct_question(42)], title="Refusals: Fay removed")
    card = wait_card(s.fake, bundle.pending_id)
    open_form(s, card.ts, fay_slack)  # her workspaces are read (and kept for a while)
    cast.people.remove_member(cast.default_ws, fay)
    edits = s.edits(card.ts)

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=fay_slack)

    only_told(s, fay_slack, NOT_VISIBLE)
    # Sent with her token, refused by Kandev (404); the bot's own read says it still waits.
    assert s.bearers(bundle.pending_id) == [s.as_(fay)]
    quietly(s.fake)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    assert s.unchanged(card.ts, edits)
    s.driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    edited = wait_outcome(s.fake, card.ts, f"✅ Answered by <@{ALICE.id}>")
    assert (outcome_line(edited) or "").endswith("in Slack: MongoDB")


def test_an_approval_kandev_hides_from_them_after_their_access_was_read_stays_open(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene()
    cast = s.cast
    gus = cast.people.fresh("Gus")
    cast.people.add_member(cast.default_ws, gus, "collaborator")
    gus_slack = SlackUser(id="U0GUS00006", name="gus")
    s.link(gus_slack, gus)
    s.link(ALICE, cast.ana)
    seeded = people_seed.permission(
        [permission_spec("Run make gus", "execute", {"command": "make gus"})],
        title="Refusals: Gus removed",
    )
    card = wait_card(s.fake, f"perm:{seeded.request_id}")
    # "I'm on it" reads his workspaces (and keeps them a while); the card shows the claim.
    act(s.driver, CHANNEL, card.ts, "👀 I'm on it", user=gus_slack)
    s.fake.wait_for(
        lambda: f"<@{gus_slack.id}>" in s.fake.message(CHANNEL, card.ts).all_text, 10, "the claim"
    )
    cast.people.remove_member(cast.default_ws, gus)
    s.fake.settle(quiet=0.5, timeout=10)
    edits = s.edits(card.ts)

    s.driver.click(CHANNEL, card.ts, text="Allow once", user=gus_slack)

    only_told(s, gus_slack, NOT_VISIBLE)
    quietly(s.fake)
    assert cast.people.resolution(seeded) is None  # still waiting in Kandev
    assert s.unchanged(card.ts, edits)
    s.driver.click(CHANNEL, card.ts, text="Allow once", user=ALICE)
    wait_outcome(s.fake, card.ts, f"✅ Allowed once by <@{ALICE.id}>")
    resolution = cast.people.resolution(seeded)
    assert resolution is not None and resolution["actor_user_id"] == cast.ana.user_id


def test_a_revoked_token_breaks_the_link_before_sending(make_scene, people_seed: Seeder) -> None:
    s = make_scene()
    cast = s.cast
    hal = cast.people.fresh("Hal")
    cast.people.add_member(cast.default_ws, hal, "collaborator")
    hal_slack = SlackUser(id="U0HAL00007", name="hal")
    s.link(hal_slack, hal)
    cast.people.revoke(hal, hal.token)
    bundle = people_seed([distinct_question(43)], title="Refusals: Hal's token revoked")
    card = wait_card(s.fake, bundle.pending_id)
    edits = s.edits(card.ts)

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=hal_slack)

    only_told(s, hal_slack, RECONNECT)
    link = s.link_of(hal_slack)
    assert link is not None and link.broken
    quietly(s.fake)
    assert s.sent_nothing(bundle.pending_id)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    assert s.unchanged(card.ts, edits)


def test_a_token_revoked_after_their_access_was_read_is_refused_by_kandev_and_breaks_the_link(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene()
    cast = s.cast
    ida = cast.people.fresh("Ida")
    cast.people.add_member(cast.default_ws, ida, "collaborator")
    ida_slack = SlackUser(id="U0IDA00008", name="ida")
    s.link(ida_slack, ida)
    bundle = people_seed([distinct_question(44)], title="Refusals: Ida's token revoked late")
    card = wait_card(s.fake, bundle.pending_id)
    open_form(s, card.ts, ida_slack)
    cast.people.revoke(ida, ida.token)
    edits = s.edits(card.ts)

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=ida_slack)

    only_told(s, ida_slack, RECONNECT)
    link = s.link_of(ida_slack)
    assert link is not None and link.broken
    # The call went out with her token and Kandev refused it (401): nothing recorded.
    assert s.bearers(bundle.pending_id) == [s.as_(ida)]
    quietly(s.fake)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    assert s.unchanged(card.ts, edits)
    # Clicking again: refused at once (the link is broken), nothing more goes out.
    calls = len(s.proxy.answer_calls(bundle.pending_id, delivered_only=False))
    s.driver.click(CHANNEL, card.ts, text="MongoDB", user=ida_slack)
    s.fake.wait_for(
        lambda: len([e for e in s.fake.ephemerals(user=ida_slack.id) if RECONNECT in e.text]) == 2,
        10,
        "the second reconnect",
    )
    assert len(s.proxy.answer_calls(bundle.pending_id, delivered_only=False)) == calls
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)


def test_a_viewer_is_refused_before_anything_is_sent(make_scene, people_seed: Seeder) -> None:
    s = make_scene()
    cast = s.cast
    s.link(BOB, cast.ben)  # a viewer on the default workspace
    bundle = people_seed([distinct_question(45)], title="Refusals: Ben views")
    seeded = people_seed.permission(
        [permission_spec("Run make ben", "execute", {"command": "make ben"})],
        title="Refusals: Ben views an approval",
    )
    card = wait_card(s.fake, bundle.pending_id)
    approval = wait_card(s.fake, f"perm:{seeded.request_id}")

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=BOB)
    only_told(s, BOB, VIEWER)
    s.driver.click(CHANNEL, approval.ts, text="Allow once", user=BOB)
    wait_ephemeral(s.fake, BOB.id, VIEWER_APPROVAL)

    quietly(s.fake)
    assert s.sent_nothing(bundle.pending_id)
    assert s.sent_nothing(f"perm:{seeded.request_id}")
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    assert cast.people.resolution(seeded) is None


def test_the_routes_answerers_apply_on_top_of_a_linked_account(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene(answerers=[ALICE.id])
    cast = s.cast
    jo = cast.people.fresh("Jo")
    cast.people.add_member(cast.default_ws, jo, "collaborator")
    s.link(BOB, jo)  # a collaborator in Kandev, but not on the route's list
    bundle = people_seed([distinct_question(46)], title="Refusals: answerers")
    card = wait_card(s.fake, bundle.pending_id)

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=BOB)

    wait_ephemeral(s.fake, BOB.id, "not on the list of people who may answer")
    quietly(s.fake)
    assert s.sent_nothing(bundle.pending_id)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)


def test_a_required_route_tells_an_unlinked_person_to_connect_and_sends_nothing(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene(identity="required")
    cast = s.cast
    s.link(ALICE, cast.ana)
    bundle = people_seed([distinct_question(47)], title="Refusals: required")
    seeded = people_seed.permission(
        [permission_spec("Run make dora", "execute", {"command": "make dora"})],
        title="Refusals: required approval",
    )
    card = wait_card(s.fake, bundle.pending_id)
    approval = wait_card(s.fake, f"perm:{seeded.request_id}")
    edits = s.edits(card.ts)

    s.driver.click(CHANNEL, card.ts, text="MongoDB", user=DORA)

    only_told(s, DORA, CONNECT)
    quietly(s.fake)
    assert s.sent_nothing(bundle.pending_id)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    assert s.unchanged(card.ts, edits)
    with s.store() as store:  # the click is parked for when she connects
        parked = store.links.take_parked_click(DORA.id, 600)
    assert parked is not None
    pending_id, click = parked
    assert pending_id == bundle.pending_id
    assert (click["action"], click["option"]) == ("answer", ["db", "q1_opt2"])

    # An approval and "I'm on it" are refused alike; nothing reaches Kandev.
    s.driver.click(CHANNEL, approval.ts, text="Allow once", user=DORA)
    wait_ephemeral(s.fake, DORA.id, "here approvals are decided with your own Kandev account")
    act(s.driver, CHANNEL, card.ts, "👀 I'm on it", user=DORA)
    s.fake.wait_for(
        lambda: len([e for e in s.fake.ephemerals(user=DORA.id) if "Connect" in e.all_text]) >= 3,
        10,
        "the third connect",
    )
    quietly(s.fake)
    assert s.sent_nothing(f"perm:{seeded.request_id}")
    assert cast.people.resolution(seeded) is None
    assert s.unchanged(card.ts, edits)

    # A linked person answers as always, with her token.
    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=ALICE)
    wait_final(cast.server, bundle.task_id, bundle.pending_id, "answered")
    assert s.bearers(bundle.pending_id) == [s.as_(cast.ana)]


def test_a_thread_replys_send_with_a_revoked_token_asks_to_reconnect_and_sends_nothing(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene()
    cast = s.cast
    oli = cast.people.fresh("Oli")
    cast.people.add_member(cast.default_ws, oli, "collaborator")
    fresh = cast.people.mint(oli)  # the token Oli connects again with
    s.link(ALICE, oli)
    cast.people.revoke(oli, oli.token)
    bundle = people_seed([distinct_question(48)], title="Refusals: reply, revoked")
    card = wait_card(s.fake, bundle.pending_id)
    s.driver.reply_in_thread(CHANNEL, card.ts, "MongoDB", user=ALICE)
    prompt = wait_ephemeral(s.fake, ALICE.id, "as your answer to")

    s.driver.click_ephemeral(prompt, text="Send")

    def shown() -> str:
        [now] = [e for e in s.fake.ephemerals(user=ALICE.id) if e.message_ts == prompt.message_ts]
        return now.all_text

    s.fake.wait_for(lambda: RECONNECT in shown(), 10, "the prompt saying to reconnect")
    link = s.link_of(ALICE)
    assert link is not None and link.broken
    assert s.sent_nothing(bundle.pending_id)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)
    # Connected again: a reply is sent with the new token.
    s.link(ALICE, oli, token=fresh)
    s.driver.reply_in_thread(CHANNEL, card.ts, "MongoDB", user=ALICE)
    again = s.fake.wait_for(
        lambda: next(
            (
                e
                for e in s.fake.ephemerals(user=ALICE.id)
                if e.message_ts != prompt.message_ts and "as your answer to" in e.all_text
            ),
            None,
        ),
        10,
        "a new prompt",
    )
    s.driver.click_ephemeral(again, text="Send")
    final = wait_final(cast.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    assert s.bearers(bundle.pending_id) == [bearer_of(fresh)]


def test_a_viewers_thread_reply_is_refused_at_send_and_nothing_is_sent(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene()
    s.link(BOB, s.cast.ben)
    bundle = people_seed([distinct_question(49)], title="Refusals: reply, viewer")
    card = wait_card(s.fake, bundle.pending_id)
    s.driver.reply_in_thread(CHANNEL, card.ts, "PostgreSQL", user=BOB)
    prompt = wait_ephemeral(s.fake, BOB.id, "as your answer to")

    s.driver.click_ephemeral(prompt, text="Send")

    wait_ephemeral(s.fake, BOB.id, VIEWER)
    quietly(s.fake)
    assert s.sent_nothing(bundle.pending_id)
    assert s.pending_in_kandev(bundle.task_id, bundle.pending_id)


def test_an_approval_with_a_token_revoked_after_their_access_was_read_breaks_the_link(
    make_scene, people_seed: Seeder
) -> None:
    s = make_scene()
    cast = s.cast
    pia = cast.people.fresh("Pia")
    cast.people.add_member(cast.default_ws, pia, "collaborator")
    pia_slack = SlackUser(id="U0PIA00009", name="pia")
    s.link(pia_slack, pia)
    seeded = people_seed.permission(
        [permission_spec("Run make pia", "execute", {"command": "make pia"})],
        title="Refusals: Pia's token revoked late",
    )
    card = wait_card(s.fake, f"perm:{seeded.request_id}")
    act(s.driver, CHANNEL, card.ts, "👀 I'm on it", user=pia_slack)  # her access is read
    s.fake.wait_for(
        lambda: f"<@{pia_slack.id}>" in s.fake.message(CHANNEL, card.ts).all_text, 10, "the claim"
    )
    cast.people.revoke(pia, pia.token)
    s.fake.settle(quiet=0.5, timeout=10)
    edits = s.edits(card.ts)

    s.driver.click(CHANNEL, card.ts, text="Allow once", user=pia_slack)

    only_told(s, pia_slack, RECONNECT)
    link = s.link_of(pia_slack)
    assert link is not None and link.broken
    quietly(s.fake)
    assert cast.people.resolution(seeded) is None
    assert s.unchanged(card.ts, edits)
