"""Who may act on a question whose route names no answerers: the members of its channel who
belong to the app's own organisation — checked with Slack (conversations.members, users.info),
on every path that acts, and refused ("could not check, try again") when Slack cannot say.
The bot in this process (HTTP), a real Kandev, the fake Slack."""

from __future__ import annotations

import dataclasses

from kandev_slack.cards.ids import ButtonValue
from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE, BOB, SlackUser
from tests.e2e.helpers import (
    db_question,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_outcome,
)
from tests.e2e.reliability.support import still_pending
from tests.kit.harness import CHANNEL, Permissions, permission_spec
from tests.unit.listing.e2e import answer_value, home_sections, run_list, titles, wait_home

#: A multi-channel guest of the workspace, not in the questions' channel.
GUEST = SlackUser(id="U0GUEST001", name="gus", real_name="Gus Guest", is_restricted=True)
#: A Slack Connect member of the (shared) questions channel, of another organisation.
PARTNER = SlackUser(id="U0PARTNER1", name="pat", real_name="Pat Partner", team_id="T0PARTNER1")
FORBIDDEN = "not on the list"
UNVERIFIABLE = "could not check"
RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo/app"})


def test_a_guest_not_in_the_channel_is_refused_from_home_and_the_listing(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    fake_slack.add_user(GUEST)
    fake_slack.set_channel_members(CHANNEL, [ALICE.id, BOB.id, fake_slack.workspace.bot_user_id])
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="For the channel's members")
    wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    alice_list = run_list(driver, user=ALICE)
    assert "For the channel's members" in titles(alice_list.all_text)
    assert "For the channel's members" not in run_list(driver, user=GUEST).all_text
    driver.app_home_opened(ALICE)
    home = wait_home(
        fake_slack, ALICE.id, lambda v: "For the channel's members" in home_sections(v)[0]
    )
    driver.app_home_opened(GUEST)
    guest_home = wait_home(fake_slack, GUEST.id, lambda v: "Waiting for an answer" in v.all_text)
    assert "For the channel's members" not in guest_home.all_text

    # The guest acting all the same (a Home or a listing shown to them earlier): refused.
    mark = fake_slack.mark()
    value = answer_value(bundle.pending_id)
    driver.click_in_view(home, value=value, user=GUEST, as_shown=True)
    wait_home(fake_slack, GUEST.id, lambda v: FORBIDDEN in v.all_text)
    guest_list = dataclasses.replace(alice_list, user=GUEST.id)
    assert driver.click_ephemeral(guest_list, value=value).status == 200
    wait_ephemeral(fake_slack, GUEST.id, FORBIDDEN)
    assert [c for c in fake_slack.calls("views.open") if c.index >= mark] == []
    assert still_pending(seed.server, bundle)


def test_a_slack_connect_member_is_refused_on_a_thread_reply_and_a_button(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    fake_slack.add_user(PARTNER)  # every user is a member of the channel: it is shared
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Shared channel")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    driver.reply_in_thread(CHANNEL, card.ts, "MongoDB", user=PARTNER)
    wait_ephemeral(fake_slack, PARTNER.id, FORBIDDEN)
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=PARTNER).status == 200
    fake_slack.wait_for(
        lambda: (
            len([e for e in fake_slack.ephemerals(user=PARTNER.id) if FORBIDDEN in e.all_text]) >= 2
        ),
        10,
        "the button's refusal",
    )
    assert still_pending(seed.server, bundle)

    # Alice, of the app's own organisation, answers the same card: the click's payload names
    # the app's own team, so nobody asks Slack of which organisation she is.
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, "✅")
    assert [c.params.get("user") for c in fake_slack.calls("users.info")] == [PARTNER.id]


def test_membership_slack_cannot_read_is_refused_with_try_again(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Unreadable membership")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    # users.info fails: a person Slack's payload does not name of the app's own team (here of
    # another) is refused, and said so.
    fake_slack.add_user(PARTNER)
    fake_slack.faults.error("users.info", "fatal_error", times=None)
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=PARTNER).status == 200
    told = wait_ephemeral(fake_slack, PARTNER.id, UNVERIFIABLE)
    assert "try again" in told.all_text
    assert still_pending(seed.server, bundle)
    fake_slack.faults.clear()

    # conversations.members fails: a click on the card itself is refused too (a click proves
    # no membership: the channel's members are read on every path, the card included).
    fake_slack.faults.error("conversations.members", "fetch_members_failed", times=None)
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    wait_ephemeral(fake_slack, ALICE.id, UNVERIFIABLE)
    assert still_pending(seed.server, bundle)

    # Slack answers again: the same person answers.
    fake_slack.faults.clear()
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, "✅")


def test_a_guest_not_in_the_channel_cannot_always_allow_from_home(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    fake_slack.add_user(GUEST)
    fake_slack.set_channel_members(CHANNEL, [ALICE.id, BOB.id, fake_slack.workspace.bot_user_id])
    bot = start_bot(app_factory)
    seeded = seed.permission([RM], title="Not for guests")
    key = approval_key(seeded.request_id)
    wait_card(fake_slack, key)
    driver = slack_driver(bot.events_url)

    driver.app_home_opened(GUEST)
    guest_home = wait_home(fake_slack, GUEST.id, lambda v: "Waiting for an answer" in v.all_text)
    assert "Not for guests" not in guest_home.all_text
    driver.app_home_opened(ALICE)
    home = wait_home(fake_slack, ALICE.id, lambda v: "Not for guests" in v.all_text)
    # Home leads through the full view ("Review and decide…"): the guest may not open it.
    review = ButtonValue(pending_id=key).encode()
    driver.click_in_view(home, value=review, user=GUEST, as_shown=True)
    wait_home(fake_slack, GUEST.id, lambda v: FORBIDDEN in v.all_text)
    kandev = Permissions(seed.server)
    assert [p["request_id"] for p in kandev.list(seeded.task_id)] == [seeded.request_id]


#: A full member of the workspace (no guest), not in the questions' channel.
CAROL = SlackUser(id="U0CAROL003", name="carol", real_name="Carol Other")


def test_a_member_not_in_the_channel_is_refused_on_the_card_itself(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    """Anyone of the workspace can read a public channel without joining it, and Slack lets
    whoever reads a message click it: a click on the card proves no membership (before: a
    click on the card itself was taken as proof, so Carol's answer and thread reply went
    through)."""
    fake_slack.add_user(CAROL)
    fake_slack.set_channel_members(CHANNEL, [ALICE.id, BOB.id, fake_slack.workspace.bot_user_id])
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="For the channel's members only")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=CAROL).status == 200
    wait_ephemeral(fake_slack, CAROL.id, FORBIDDEN)
    driver.reply_in_thread(CHANNEL, card.ts, "MongoDB", user=CAROL)
    fake_slack.wait_for(
        lambda: (
            len([e for e in fake_slack.ephemerals(user=CAROL.id) if FORBIDDEN in e.all_text]) >= 2
        ),
        10,
        "the thread reply's refusal",
    )
    assert still_pending(seed.server, bundle)

    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, "✅")
