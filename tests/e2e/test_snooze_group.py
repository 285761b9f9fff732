"""Snoozing a group row end to end (the real Kandev, the fake Slack): three identical questions
are one row on the App Home; its "Snooze… 1 h" snoozes the three — the row leaves "Waiting for
an answer" and the three are listed under "💤 Snoozed (3)", each with Unsnooze."""

from __future__ import annotations

import json

from kandev_slack.kits.fakeslack import ALICE
from tests.e2e.helpers import db_question, start_bot, wait_card
from tests.e2e.test_answer_all import wait_group
from tests.e2e.test_snooze import SNOOZE
from tests.unit.listing.e2e import wait_home


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
