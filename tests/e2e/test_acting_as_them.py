"""Acting as them (issue 32, point 4): in a ``linked`` route every resolution a linked person
makes — a card's button, the form (several questions), free text, reject, skip, an approval's
Allow once / Reject, a thread reply's Send, Send to all, App Home's and the listing's Answer… —
reaches Kandev with THEIR token; an unlinked person's with the bot's.

Real Kandev with auth on and its people (``kandev_people``), the fake Slack; the bot in this
process (``people_app_factory``). Kandev keeps no author on a clarification's answer, so the
token of each answer call is read at the recording proxy in front of Kandev (its display
prefix); an approval's is Kandev's own audit, ``permission_resolution.actor_user_id``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.acting import ALICE, DORA, Scene, scene
from tests.e2e.helpers import (
    act,
    assert_sending,
    choice_and_text_blocks,
    distinct_question,
    open_modal,
    response_of,
    skip,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_form_result,
    wait_outcome,
)
from tests.kit.harness import (
    CHANNEL,
    Cast,
    KandevProxy,
    Seeder,
    option_id,
    permission_spec,
    question,
)
from tests.unit.listing.e2e import answer_value, run_list, wait_home

ANSWER_MODAL = "kq_answer_modal"
OTHER_MODAL = "kq_other_modal"
REJECT_MODAL = "kq_reject_modal"


@pytest.fixture
def people_proxy(kandev_people: Cast) -> Iterator[KandevProxy]:
    kandev_people.server.start()
    proxy = KandevProxy(kandev_people.server.base_url).start()
    yield proxy
    proxy.close()


@pytest.fixture
def linked(
    people_app_factory, kandev_people, fake_slack, slack_driver, tmp_path, people_proxy
) -> Scene:
    """The bot in this process, every route ``linked``; Alice linked to Ana."""
    made = scene(
        people_app_factory, kandev_people, fake_slack, slack_driver, tmp_path, people_proxy
    )
    made.link(ALICE, kandev_people.ana)
    return made


def test_a_linked_persons_click_form_free_text_reject_and_skip_use_their_token(
    linked: Scene, people_seed: Seeder
) -> None:
    s, ana = linked, linked.cast.ana
    fake, driver = s.fake, s.driver
    click = people_seed([distinct_question(1)], title="Acting: one click")
    several = people_seed(
        [
            distinct_question(2),
            question("env", "Env", "Where #2?", ("Staging", "s"), ("Prod", "p")),
        ],
        title="Acting: the form",
    )
    free = people_seed([distinct_question(3)], title="Acting: free text")
    rejected = people_seed([distinct_question(4)], title="Acting: reject")
    skipped = people_seed([distinct_question(5)], title="Acting: skip")
    cards = {b.pending_id: wait_card(fake, b.pending_id) for b in (click, several, free)}
    cards |= {b.pending_id: wait_card(fake, b.pending_id) for b in (rejected, skipped)}

    # A card's button.
    driver.click(CHANNEL, cards[click.pending_id].ts, text="MongoDB", user=ALICE)
    final = wait_final(s.cast.server, click.task_id, click.pending_id, "answered")
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    wait_outcome(fake, cards[click.pending_id].ts, f"✅ Answered by <@{ALICE.id}>")

    # The form of several questions.
    mark = fake.mark()
    driver.click(CHANNEL, cards[several.pending_id].ts, text="Answer…", user=ALICE)
    view = open_modal(fake, ANSWER_MODAL, after=mark)
    (db, _), (env, _) = choice_and_text_blocks(view)
    ack = driver.submit_view(view, {db: {"kq_choice": "q1_opt1"}, env: {"kq_choice": "q2_opt2"}})
    assert_sending(ack)
    assert wait_form_result(fake, view.id).definition["title"]["text"] == "Answered"
    final = wait_final(s.cast.server, several.task_id, several.pending_id, "answered")
    assert response_of(final, "env")["selected_options"] == ["q2_opt2"]

    # Free text ("Other answer…").
    mark = fake.mark()
    driver.click(CHANNEL, cards[free.pending_id].ts, text="Other answer…", user=ALICE)
    view = open_modal(fake, OTHER_MODAL, after=mark)
    [(_choice, text)] = choice_and_text_blocks(view)
    assert_sending(driver.submit_view(view, {text: {"kq_text": "SQLite, as Ana says"}}))
    final = wait_final(s.cast.server, free.task_id, free.pending_id, "answered")
    assert response_of(final, "db")["custom_text"] == "SQLite, as Ana says"

    # Reject… with a reason.
    mark = fake.mark()
    act(driver, CHANNEL, cards[rejected.pending_id].ts, "Reject…", user=ALICE)
    view = open_modal(fake, REJECT_MODAL, after=mark)
    assert_sending(driver.submit_view(view, {"kq_reason": {"kq_reason": "Not this sprint"}}))
    wait_final(s.cast.server, rejected.task_id, rejected.pending_id, "rejected")
    wait_outcome(fake, cards[rejected.pending_id].ts, f"⛔ Rejected by <@{ALICE.id}>")

    # Skip… then "Skip it".
    skip(driver, CHANNEL, cards[skipped.pending_id].ts, user=ALICE)
    wait_final(s.cast.server, skipped.task_id, skipped.pending_id, "rejected")
    wait_outcome(fake, cards[skipped.pending_id].ts, f"⏭ Skipped by <@{ALICE.id}>")

    for bundle in (click, several, free, rejected, skipped):
        assert s.bearers(bundle.pending_id) == [s.as_(ana)], bundle.pending_id


def test_an_unlinked_person_in_a_linked_route_acts_with_the_bots_token(
    linked: Scene, people_seed: Seeder
) -> None:
    s = linked
    bundle = people_seed([distinct_question(11)], title="Acting: Dora is not linked")
    card = wait_card(s.fake, bundle.pending_id)

    s.driver.click(CHANNEL, card.ts, text="PostgreSQL", user=DORA)

    wait_final(s.cast.server, bundle.task_id, bundle.pending_id, "answered")
    wait_outcome(s.fake, card.ts, f"✅ Answered by <@{DORA.id}> in Slack: PostgreSQL")
    assert s.bearers(bundle.pending_id) == [s.as_(s.cast.bot)]


def test_approvals_are_decided_with_their_token_and_kandev_credits_them(
    linked: Scene, people_seed: Seeder
) -> None:
    s, cast = linked, linked.cast
    allowed = people_seed.permission(
        [permission_spec("Run make build", "execute", {"command": "make build"})],
        title="Acting: allow once",
    )
    denied = people_seed.permission(
        [permission_spec("Run make deploy", "execute", {"command": "make deploy"})],
        title="Acting: reject",
    )
    by_bot = people_seed.permission(
        [permission_spec("Run make lint", "execute", {"command": "make lint"})],
        title="Acting: allowed by Dora, unlinked",
    )
    cards = {p.request_id: wait_card(s.fake, f"perm:{p.request_id}") for p in (allowed, denied)}
    cards[by_bot.request_id] = wait_card(s.fake, f"perm:{by_bot.request_id}")

    s.driver.click(CHANNEL, cards[allowed.request_id].ts, text="Allow once", user=ALICE)
    s.driver.click(CHANNEL, cards[denied.request_id].ts, text="Reject", user=ALICE)
    s.driver.click(CHANNEL, cards[by_bot.request_id].ts, text="Allow once", user=DORA)

    wait_outcome(s.fake, cards[allowed.request_id].ts, f"✅ Allowed once by <@{ALICE.id}>")
    wait_outcome(s.fake, cards[denied.request_id].ts, "⛔")
    wait_outcome(s.fake, cards[by_bot.request_id].ts, f"✅ Allowed once by <@{DORA.id}>")
    expected = {
        allowed.request_id: (cast.ana, "allow_once"),
        denied.request_id: (cast.ana, "reject_once"),
        by_bot.request_id: (cast.bot, "allow_once"),
    }
    for seeded in (allowed, denied, by_bot):
        resolution = cast.people.resolution(seeded)
        assert resolution is not None, seeded.request_id
        person, option = expected[seeded.request_id]
        assert resolution["actor_user_id"] == person.user_id, seeded.request_id
        assert resolution["option_id"] == option
        assert resolution["actor_kind"] == "personal_access_token"
        assert s.bearers(f"perm:{seeded.request_id}") == [s.as_(person)]


def test_a_thread_replys_send_and_send_to_all_use_their_token(
    linked: Scene, people_seed: Seeder
) -> None:
    s, ana = linked, linked.cast.ana
    replied = people_seed([distinct_question(21)], title="Acting: thread reply")
    card = wait_card(s.fake, replied.pending_id)
    s.driver.reply_in_thread(CHANNEL, card.ts, "2", user=ALICE)
    prompt = wait_ephemeral(s.fake, ALICE.id, "as your answer to")
    s.driver.click_ephemeral(prompt, text="Send")
    final = wait_final(s.cast.server, replied.task_id, replied.pending_id, "answered")
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    assert s.bearers(replied.pending_id) == [s.as_(ana)]

    # Three agents ask one question (the same as each other's, no other test's): Send to all.
    same = [people_seed([distinct_question(22)], title=f"Acting: same {n}") for n in (1, 2, 3)]
    first = wait_card(s.fake, same[0].pending_id)
    for bundle in same[1:]:
        wait_card(s.fake, bundle.pending_id)
    s.fake.wait_for(
        lambda: "2 more agents asked this" in s.fake.message(CHANNEL, first.ts).all_text,
        15,
        "the first card counting the two others",
    )
    s.driver.click(CHANNEL, first.ts, text="PostgreSQL", user=ALICE)
    offer = wait_ephemeral(s.fake, ALICE.id, "to the 2 other agents that asked this too?")
    s.driver.click_ephemeral(offer, text="Send to all 2")
    for bundle in same:
        wait_final(s.cast.server, bundle.task_id, bundle.pending_id, "answered")
        assert s.bearers(bundle.pending_id) == [s.as_(ana)], bundle.pending_id


def test_app_homes_and_the_listings_answer_use_their_token(
    linked: Scene, people_seed: Seeder
) -> None:
    s, ana = linked, linked.cast.ana
    from_home = people_seed([distinct_question(31)], title="Acting: from Home")
    from_list = people_seed([distinct_question(32)], title="Acting: from the listing")
    wait_card(s.fake, from_home.pending_id)
    wait_card(s.fake, from_list.pending_id)

    s.driver.app_home_opened(ALICE)
    home = wait_home(s.fake, ALICE.id, lambda v: "Acting: from Home" in v.all_text)
    mark = s.fake.mark()
    s.driver.click_in_view(home, value=answer_value(from_home.pending_id))
    view = open_modal(s.fake, ANSWER_MODAL, after=mark)
    [(choice, _)] = choice_and_text_blocks(view)
    assert_sending(s.driver.submit_view(view, {choice: {"kq_choice": option_id(1, 1)}}))
    assert (
        wait_final(s.cast.server, from_home.task_id, from_home.pending_id, "answered")["status"]
        == "answered"
    )

    listing = run_list(s.driver, "from the listing", user=ALICE)
    mark = s.fake.mark()
    s.driver.click_ephemeral(listing, value=answer_value(from_list.pending_id))
    view = open_modal(s.fake, ANSWER_MODAL, after=mark)
    [(choice, _)] = choice_and_text_blocks(view)
    assert_sending(s.driver.submit_view(view, {choice: {"kq_choice": option_id(1, 2)}}))
    assert (
        wait_final(s.cast.server, from_list.task_id, from_list.pending_id, "answered")["status"]
        == "answered"
    )

    assert s.bearers(from_home.pending_id) == [s.as_(ana)]
    assert s.bearers(from_list.pending_id) == [s.as_(ana)]
    # Both cards show how they ended (edited through the outbox, a moment after Kandev's record).
    for bundle in (from_home, from_list):
        wait_outcome(
            s.fake, wait_card(s.fake, bundle.pending_id).ts, f"✅ Answered by <@{ALICE.id}>", 15
        )
