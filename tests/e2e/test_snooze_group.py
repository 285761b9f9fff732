"""Snoozing a group row end to end (the real Kandev, the fake Slack): three identical questions
are one row on the App Home and in ``/kandev-questions``; the row's "Snooze… 1 h" snoozes the
three — the row leaves "Waiting for an answer" (and the listing, which counts them as snoozed)
and the three are listed under "💤 Snoozed (3)", each with Unsnooze; when the snooze ends the
row is back."""

from __future__ import annotations

import json

from kandev_slack.kits.fakeslack import ALICE, Delivery, Ephemeral
from tests.e2e.helpers import (
    MARGIN_S,
    db_question,
    distinct_question,
    start_bot,
    wait_card,
    wait_ephemeral,
)
from tests.e2e.test_answer_all import wait_group
from tests.e2e.test_snooze import SNOOZE
from tests.unit.listing.e2e import run_list, titles, wait_home

#: Seconds in a snooze "hour" here (SNOOZE_HOUR_S): long enough to look at the views first.
HOUR_S = 6


def test_snoozing_a_group_row_on_home_snoozes_its_three_items(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    bundles = [seed([db_question()], title=f"Snoozed row {n}") for n in (1, 2, 3)]
    cards = [wait_card(fake_slack, b.pending_id) for b in bundles]
    wait_group(fake_slack, cards[0].ts, "🧵 2 more agents asked this: <")
    driver = slack_driver(bot.events_url)

    assert driver.app_home_opened(ALICE).status == 200
    wait_home(fake_slack, ALICE.id, lambda v: "*3 agents*" in v.all_text)
    shown = driver.home_of(ALICE)
    assert shown is not None
    value = json.dumps({"p": bundles[0].pending_id, "h": 1, "g": True}, separators=(",", ":"))
    assert driver.select_in_view(shown, action_id=SNOOZE, option=value).status == 200

    home = wait_home(fake_slack, ALICE.id, lambda v: "💤 Snoozed (3)" in v.all_text)
    waiting, _, snoozed = home.all_text.partition("💤 Snoozed (3)")
    assert "Snoozed row" not in waiting and "3 agents" not in waiting
    assert all(f"Snoozed row {n}" in snoozed for n in (1, 2, 3))
    assert snoozed.count("Unsnooze") == 3


def test_snoozing_a_group_row_in_the_listing_snoozes_its_three_items_until_it_ends(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory, SNOOZE_HOUR_S=str(HOUR_S))
    bundles = [seed([db_question()], title=f"Listed row {n}") for n in (1, 2, 3)]
    cards = [wait_card(fake_slack, b.pending_id) for b in bundles]
    wait_group(fake_slack, cards[0].ts, "🧵 2 more agents asked this: <")
    alone = seed([distinct_question(7)], title="Listed alone")
    wait_card(fake_slack, alone.pending_id)
    driver = slack_driver(bot.events_url)

    listing = run_list(driver, "listed")
    assert "*3 agents*" in listing.all_text
    value = json.dumps({"p": bundles[0].pending_id, "h": 1, "g": True}, separators=(",", ":"))
    asked = len(fake_slack.ephemerals(user=ALICE.id))
    assert driver.select_ephemeral(listing, action_id=SNOOZE, option=value).status == 200
    told = wait_ephemeral(fake_slack, ALICE.id, "💤 Snoozed for 1 h")
    assert "off your App Home, your list and your DM cards" in told.text

    # Slack's redelivered copy of the choice changes nothing and says nothing more.
    again = Delivery(retry_num=1, retry_reason="http_timeout")
    assert driver.select_ephemeral(listing, action_id=SNOOZE, option=value, delivery=again).ok
    after = run_list(driver, "listed")
    assert titles(after.all_text) == ["Listed alone"]
    assert "3 agents" not in after.all_text
    assert "💤 3 questions snoozed by you are not listed" in after.all_text
    shown = fake_slack.ephemerals(user=ALICE.id)[asked:]
    assert len([e for e in shown if e.text.startswith("💤 Snoozed")]) == 1

    assert driver.app_home_opened(ALICE).status == 200
    home = wait_home(fake_slack, ALICE.id, lambda v: "💤 Snoozed (3)" in v.all_text)
    waiting, _, snoozed = home.all_text.partition("💤 Snoozed (3)")
    assert "Listed row" not in waiting and all(f"Listed row {n}" in snoozed for n in (1, 2, 3))

    # The snooze ends ("1 h" is HOUR_S seconds here): the row is back, whole.
    def row_back() -> Ephemeral | None:
        listed = run_list(driver, "listed")
        return listed if "*3 agents*" in listed.all_text else None

    back = fake_slack.wait_for(row_back, HOUR_S + 5 + MARGIN_S, "the group row listed again")
    assert titles(back.all_text) == ["Listed row 1", "Listed alone"]
    assert "snoozed by you" not in back.all_text
