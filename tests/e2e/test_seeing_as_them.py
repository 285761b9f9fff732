"""Seeing as them and Kandev's inbox in step (issue 32, points 5 and 7), end to end: the bot
in this process on the people's Kandev (auth and the Needs-you inbox on, ``kandev_people``),
the fake Slack, a routing file whose routes use people's own accounts (``identity =
"linked"``) but for one ``bot`` route (the label ``as-bot``).

Eve's workspace is private to Eve and her members: the bot (a viewer there: it posts its
questions), Ana (a collaborator); not Cat nor Ben. Linked, Ana sees its questions in her
listing, App Home and DM cards; Cat and Ben do not, but for the bot route's. What Ana snoozes
in Kandev's own inbox leaves her Home (not Ben's); what she snoozes in Slack is snoozed in
her Kandev inbox too, and Unsnooze (or the snooze's end) brings it back there."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from kandev_slack.inproc import InProcessBot
from kandev_slack.kits.fakeslack import ALICE, BOB, FakeSlack, SlackDriver, SlackUser
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    distinct_question,
    slash_reply,
    start_bot,
    wait_card,
    wait_ephemeral,
)
from tests.kit.harness import CHANNEL, Cast, Person, Seeder
from tests.unit.listing.e2e import home_sections, run_list, wait_home

#: Ana, Ben and Cat in Slack (Alice's and Bob's fake Slack accounts stand for Ana and Ben).
ANA, BEN = ALICE, BOB
CAT = SlackUser(id="U0CAT00003", name="cat", real_name="Cat Kandev")
SNOOZE = "kq_snooze"
AS_BOT = "as-bot"
#: How long the bot keeps a person's Kandev inbox, and how often its DM cards follow it, here.
HIDDEN_TTL_S, FOLLOW_S = 1.0, 1.0


def routes(tmp_path: Path) -> Path:
    """People's own accounts everywhere (``linked``), but for the label ``as-bot``."""
    path = tmp_path / "routes.toml"
    path.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\nidentity = "linked"\n\n'
        f'[[route]]\nlabels = ["{AS_BOT}"]\nidentity = "bot"\n'
    )
    return path


def start(factory: Any, fake: FakeSlack, tmp_path: Path, **env: str) -> InProcessBot:
    fake.add_user(CAT)
    fake.set_channel_members(CHANNEL, [ANA.id, BEN.id, CAT.id, fake.workspace.bot_user_id])
    bot = start_bot(
        factory,
        KANDEV_SLACK_CONFIG=str(routes(tmp_path)),
        KANDEV_SLACK_SECRET_KEY=Vault.new_key(),
        **env,
    )
    assert isinstance(bot, InProcessBot)
    return bot


def link(bot: InProcessBot, slack_user: SlackUser, person: Person) -> None:
    """``slack_user`` linked to ``person``'s Kandev account (as Connect would store it)."""
    assert bot.bot is not None
    bot.bot.store.links.link(
        slack_user.id, person.user_id, person.display_name, person.email, person.token
    )


def option(pending_id: str, hours: int) -> str:
    """The value of the "Snooze <hours> h" option (as the bot renders it)."""
    return json.dumps({"p": pending_id, "h": hours}, separators=(",", ":"))


def waiting_part(driver: SlackDriver, fake: FakeSlack, user: SlackUser, predicate) -> str:
    """The person's Home, opened now, once ``predicate(its text)`` holds: its waiting part."""
    driver.app_home_opened(user)
    home = wait_home(fake, user.id, lambda v: predicate(v.all_text))
    return home_sections(home)[0]


def dms(fake: FakeSlack, user: SlackUser) -> str:
    """Every DM card the person got, as one text."""
    return "\n".join(m.all_text for m in fake.messages(fake.ctx.resolve_channel(user.id)))


def hidden_in_kandev(cast: Cast, person: Person, workspace_id: str) -> dict[str, dict[str, Any]]:
    """What ``person`` snoozed or dismissed in the workspace's Kandev inbox, by pending id."""
    rows = cast.people.hidden(person, workspace_id).get("bundles") or []
    return {str(row["pending_id"]): row for row in rows}


def test_a_linked_person_sees_only_what_their_kandev_account_sees(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    bot = start(people_app_factory, fake_slack, tmp_path)
    driver = slack_driver(bot.events_url)
    link(bot, ANA, cast.ana)
    link(bot, CAT, cast.cat)
    link(bot, BEN, cast.ben)
    for user in (ANA, CAT):
        slash_reply(driver, "subscribe", "Subscribed", user=user)

    private = people_seed.by(cast.eve)(
        [distinct_question(1)], title="Eve's private question", workspace_id=cast.eve_ws
    )
    routed_as_bot = people_seed.by(cast.eve)(
        [distinct_question(2)],
        title="Eve's question on a bot route",
        workspace_id=cast.eve_ws,
        labels=[AS_BOT],
    )
    wait_card(fake_slack, private.pending_id)
    wait_card(fake_slack, routed_as_bot.pending_id)

    # The listing: Ana's account is a member of Eve's workspace; Cat's and Ben's are not.
    anas = run_list(driver, user=ANA).all_text
    assert "Eve's private question" in anas and "Eve's question on a bot route" in anas
    for other in (CAT, BEN):
        theirs = run_list(driver, user=other).all_text
        assert "Eve's question on a bot route" in theirs  # a bot route: as before
        assert "Eve's private question" not in theirs

    # App Home.
    both = ("Eve's private question", "Eve's question on a bot route")
    home = waiting_part(driver, fake_slack, ANA, lambda t: all(x in t for x in both))
    assert all(x in home for x in both)
    cats = waiting_part(driver, fake_slack, CAT, lambda t: "Eve's question on a bot route" in t)
    assert "Eve's private question" not in cats

    # DM cards: Ana gets both; Cat only the bot route's (decided once for each card, together).
    fake_slack.wait_for(
        lambda: all(x in dms(fake_slack, ANA) for x in both), POLL_S + MARGIN_S + 5, "Ana's DMs"
    )
    fake_slack.wait_for(
        lambda: "Eve's question on a bot route" in dms(fake_slack, CAT),
        POLL_S + MARGIN_S + 5,
        "Cat's DM",
    )
    assert "Eve's private question" not in dms(fake_slack, CAT)


def test_kandevs_inbox_and_slacks_snooze_in_step(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    bot = start(people_app_factory, fake_slack, tmp_path)
    driver = slack_driver(bot.events_url)
    link(bot, ANA, cast.ana)
    link(bot, BEN, cast.ben)
    hidden = people_seed([distinct_question(3)], title="Snoozed in Kandev by Ana")
    shown = people_seed([distinct_question(4)], title="Snoozed in Slack by Ana")
    wait_card(fake_slack, hidden.pending_id)
    wait_card(fake_slack, shown.pending_id)

    # Ana snoozes one in Kandev's own inbox: it leaves her Home and listing, not Ben's.
    cast.people.snooze(cast.ana, hidden.pending_id, "4h")
    try:
        anas = waiting_part(driver, fake_slack, ANA, lambda t: "Snoozed in Slack by Ana" in t)
        assert "Snoozed in Kandev by Ana" not in anas
        assert "Snoozed in Kandev by Ana" not in run_list(driver, user=ANA).all_text
        bens = waiting_part(driver, fake_slack, BEN, lambda t: "Snoozed in Kandev by Ana" in t)
        assert "Snoozed in Slack by Ana" in bens
    finally:
        cast.people.unsnooze(cast.ana, hidden.pending_id)

    # Ana snoozes the other in Slack (Home, 4 h): her Kandev inbox snoozes it too, as long.
    view = fake_slack.home(ANA.id)
    assert view is not None
    ack = driver.select_in_view(view, action_id=SNOOZE, option=option(shown.pending_id, 4))
    assert ack.status == 200
    # The Home's refresh and its notice are two publishes: wait for the one with both.
    hides = "Your Kandev Needs-you inbox hides it too (snoozed there for 4 h)"
    told = wait_home(
        fake_slack, ANA.id, lambda v: "💤 Snoozed (1)" in v.all_text and hides in v.all_text
    )
    assert hides in told.all_text
    there = hidden_in_kandev(cast, cast.ana, cast.default_ws)
    assert there[shown.pending_id]["state"] == "snoozed"
    assert shown.pending_id not in hidden_in_kandev(cast, cast.ben, cast.default_ws)
    slack_snooze = bot.bot.store.snoozes.snooze_of(ANA.id, shown.pending_id) if bot.bot else None
    assert slack_snooze is not None
    kandev_until = datetime.fromisoformat(str(there[shown.pending_id]["snooze_until"]))
    assert kandev_until >= slack_snooze.until - timedelta(seconds=1)  # never shorter

    # Unsnooze in Slack: back in her Kandev inbox, and on her Home at once.
    home = fake_slack.home(ANA.id)
    assert home is not None
    assert driver.click_in_view(home, text="Unsnooze", user=ANA).status == 200
    too = "back in your Kandev Needs-you inbox too"
    back = wait_home(
        fake_slack, ANA.id, lambda v: "💤 Snoozed" not in v.all_text and too in v.all_text
    )
    assert too in back.all_text
    assert "Snoozed in Slack by Ana" in home_sections(back)[0]
    assert shown.pending_id not in hidden_in_kandev(cast, cast.ana, cast.default_ws)


def test_the_end_of_a_slack_snooze_clears_it_in_kandev(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    bot = start(people_app_factory, fake_slack, tmp_path, SNOOZE_HOUR_S="3")  # "1 h" is 3 s
    driver = slack_driver(bot.events_url)
    link(bot, ANA, cast.ana)
    bundle = people_seed([distinct_question(5)], title="Back soon in Kandev too")
    wait_card(fake_slack, bundle.pending_id)
    driver.app_home_opened(ANA)
    view = wait_home(fake_slack, ANA.id, lambda v: "Back soon in Kandev too" in v.all_text)
    assert driver.select_in_view(view, action_id=SNOOZE, option=option(bundle.pending_id, 1)).ok
    wait_home(fake_slack, ANA.id, lambda v: "💤 Snoozed (1)" in v.all_text)
    # Kandev's own snooze is an hour: the Slack snooze's end (3 s here) clears it.
    assert bundle.pending_id in hidden_in_kandev(cast, cast.ana, cast.default_ws)
    fake_slack.wait_for(
        lambda: bundle.pending_id not in hidden_in_kandev(cast, cast.ana, cast.default_ws),
        3 + 5 + MARGIN_S,
        "the Kandev snooze cleared",
    )
    back = wait_home(fake_slack, ANA.id, lambda v: "💤 Snoozed (1)" not in v.all_text, timeout=15)
    assert "Back soon in Kandev too" in home_sections(back)[0]


def test_a_refused_token_sees_as_unlinked(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    """Cat's token is revoked in Kandev: her link is marked broken when her views are built,
    and she sees what an unlinked person would (the bot route's and the linked route's)."""
    cast = kandev_people
    bot = start(people_app_factory, fake_slack, tmp_path)
    driver = slack_driver(bot.events_url)
    gone = cast.people.fresh("Gone")
    token = cast.people.mint(gone)
    link(bot, CAT, Person(gone.user_id, gone.email, gone.display_name, gone.password, token))
    cast.people.revoke(gone, token)
    bundle = people_seed.by(cast.eve)(
        [distinct_question(6)], title="Eve's question for everyone", workspace_id=cast.eve_ws
    )
    wait_card(fake_slack, bundle.pending_id)
    assert "Eve's question for everyone" in run_list(driver, user=CAT).all_text
    assert bot.bot is not None
    link_now = bot.bot.store.links.get(CAT.id)
    assert link_now is not None and link_now.broken


def test_in_step_over_socket_mode(
    people_bot_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    """The bot as a process in Socket Mode: Ana (linked in its database) snoozes a DM card in
    Slack, her Kandev inbox snoozes it too; Unsnooze brings it back there; her listing shows
    Eve's question, Cat's does not."""
    cast = kandev_people
    key = Vault.new_key()
    url = f"sqlite:///{tmp_path / 'socket-bot.db'}"
    fake_slack.add_user(CAT)
    fake_slack.set_channel_members(
        CHANNEL, [ANA.id, BEN.id, CAT.id, fake_slack.workspace.bot_user_id]
    )
    start_bot(
        people_bot_factory,
        mode="socket",
        db_url=url,
        KANDEV_SLACK_CONFIG=str(routes(tmp_path)),
        KANDEV_SLACK_SECRET_KEY=key,
    )
    with Database(url, vault=Vault.from_keys(key)) as store:  # as Connect stores them
        for user, person in ((ANA, cast.ana), (CAT, cast.cat)):
            store.links.link(
                user.id, person.user_id, person.display_name, person.email, person.token
            )
    driver = slack_driver(transport="socket")
    dm = fake_slack.ctx.resolve_channel(ANA.id)
    assert driver.slash("/kandev-questions", "subscribe", user=ANA, channel=ANA.id).ok
    eves = people_seed.by(cast.eve)(
        [distinct_question(7)], title="Eve's question over the socket", workspace_id=cast.eve_ws
    )
    wait_card(fake_slack, eves.pending_id)
    assert "Eve's question over the socket" in run_list(driver, user=ANA).all_text
    assert "Eve's question over the socket" not in run_list(driver, user=CAT).all_text

    copy = fake_slack.wait_for(
        lambda: next(iter(fake_slack.messages(dm)), None), POLL_S + MARGIN_S + 5, "Ana's DM card"
    )
    assert driver.select(
        dm, copy.ts, action_id=SNOOZE, option=option(eves.pending_id, 24), user=ANA
    ).ok
    wait_ephemeral(fake_slack, ANA.id, "snoozed there for 24 h")
    there = hidden_in_kandev(cast, cast.ana, cast.eve_ws)
    assert there[eves.pending_id]["state"] == "snoozed"

    collapsed = fake_slack.wait_for(
        lambda: (
            fake_slack.message(dm, copy.ts)
            if "Unsnooze" in fake_slack.message(dm, copy.ts).all_text
            else None
        ),
        POLL_S + MARGIN_S,
        "the DM card collapsed",
    )
    assert driver.click(dm, collapsed.ts, text="Unsnooze", user=ANA).ok
    wait_ephemeral(fake_slack, ANA.id, "back in your Kandev Needs-you inbox too")
    assert eves.pending_id not in hidden_in_kandev(cast, cast.ana, cast.eve_ws)


def test_a_hide_in_kandevs_inbox_collapses_a_posted_dm_card(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    """Ana got a DM card; then she snoozes the item in Kandev's own inbox: the card collapses
    ("💤 Snoozed until …") within a round of the worker and the hidden items' keep; un-snoozed
    there, it is restored."""
    cast = kandev_people
    # Seeing keeps a hidden list INBOX_HIDDEN_TTL_S (15 s), the worker follows every
    # INBOX_FOLLOW_S (5 s): both shorter here.
    bot = start(
        people_app_factory,
        fake_slack,
        tmp_path,
        INBOX_HIDDEN_TTL_S=str(HIDDEN_TTL_S),
        INBOX_FOLLOW_S=str(FOLLOW_S),
    )
    driver = slack_driver(bot.events_url)
    link(bot, ANA, cast.ana)
    slash_reply(driver, "subscribe", "Subscribed", user=ANA)
    bundle = people_seed([distinct_question(11)], title="Hidden later in Kandev by Ana")
    wait_card(fake_slack, bundle.pending_id)
    fake_slack.wait_for(
        lambda: "Hidden later in Kandev by Ana" in dms(fake_slack, ANA),
        POLL_S + MARGIN_S + 5,
        "Ana's DM card",
    )
    assert "💤 Snoozed until" not in dms(fake_slack, ANA)
    follow_s = HIDDEN_TTL_S + FOLLOW_S + 1 + MARGIN_S + 5  # the keep, a round, slack for load
    cast.people.snooze(cast.ana, bundle.pending_id, "1h")
    try:
        fake_slack.wait_for(
            lambda: "💤 Snoozed until" in dms(fake_slack, ANA), follow_s, "the DM card collapsed"
        )
        assert bot.bot is not None
        mirror = bot.bot.store.snoozes.snooze_of(ANA.id, bundle.pending_id)
        assert mirror is not None and mirror.from_kandev
    finally:
        cast.people.unsnooze(cast.ana, bundle.pending_id)
    fake_slack.wait_for(
        lambda: "💤 Snoozed until" not in dms(fake_slack, ANA), follow_s, "the DM card restored"
    )
    assert "Hidden later in Kandev by Ana" in dms(fake_slack, ANA)
    assert bot.bot.store.snoozes.snooze_of(ANA.id, bundle.pending_id) is None
    # The mirror's end is not sent back: Kandev's inbox is as Ana left it.
    assert bundle.pending_id not in hidden_in_kandev(cast, cast.ana, cast.default_ws)
