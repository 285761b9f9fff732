"""Snooze as it is shown (kandev_slack/surfaces/snooze.py) and its option values
(kandev_slack/cards/ids.py): the
"Snooze…" select offers 1 h / 4 h / 24 h, each value decodes back to its item and length, and
anything else is refused as not ours; a snoozed DM card is one line with Unsnooze; Home's
section counts and lists the snoozed items; every rendering is within Slack's limits and
cannot notify anyone whatever the task title (property)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.ids import CodecError, SnoozeValue, parse_button_value, parse_snooze_value
from kandev_slack.core.snooze import SNOOZE_HOURS, Snooze
from kandev_slack.kits.fakeslack import validate_view
from kandev_slack.surfaces.home import render_home
from kandev_slack.surfaces.listing import render_listing
from kandev_slack.surfaces.snooze import (
    MAX_SNOOZED_SHOWN,
    back_text,
    snooze_select,
    snoozed_card,
    snoozed_home_blocks,
    snoozed_in_listing,
    with_snooze_select,
)
from kandev_slack.surfaces.waiting import ListingPage, Query
from tests.kit.factories import KANDEV_URL, NOW, make_task
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.safety import assert_cannot_notify, assert_text_cannot_notify
from tests.unit.cards.strategies import mention_texts
from tests.unit.cards.test_limits_property import SETTINGS

pending_ids = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=120
)


def snooze(pending_id: str = "p-1", hours: int = 4) -> Snooze:
    return Snooze(
        user_id="U0BOB00002",
        pending_id=pending_id,
        until=NOW + timedelta(hours=hours),
        hours=hours,
        token="t-1",
    )


@SETTINGS
@given(pending_ids, st.sampled_from(SNOOZE_HOURS), st.booleans())
def test_every_offered_value_decodes_to_its_item_and_length(
    pending_id: str, hours: int, group: bool
) -> None:
    select = snooze_select(pending_id, group=group)
    if select is None:  # too long for an option's 150 characters: not offered at all
        with pytest.raises(CodecError):
            SnoozeValue(pending_id=pending_id, hours=hours, group=group).encode()
        return
    assert [o["text"]["text"] for o in select["options"]] == [
        "Snooze 1 h",
        "Snooze 4 h",
        "Snooze 24 h",
    ]
    decoded = [parse_snooze_value(o["value"]) for o in select["options"]]
    assert [(v.pending_id, v.hours, v.group) for v in decoded] == [
        (pending_id, h, group) for h in SNOOZE_HOURS
    ]
    assert all(len(o["value"]) <= 150 for o in select["options"])


@SETTINGS
@given(st.one_of(st.text(max_size=200), st.integers().map(str)))
def test_a_value_the_bot_did_not_make_is_refused(raw: str) -> None:
    try:
        value = parse_snooze_value(raw)
    except CodecError:
        return
    assert value.hours in SNOOZE_HOURS and value.pending_id  # only a well-formed value decodes


@pytest.mark.parametrize(
    "raw",
    [
        json.dumps({"p": "p-1", "h": 2}),  # a length the select never offers
        json.dumps({"p": "p-1", "h": 4, "x": 1}),  # a field it never sends
        json.dumps({"p": "", "h": 4}),
        json.dumps({"p": "p-1"}),
        '{"p": "p-1", "h": "4 hours"}',
        "",
    ],
)
def test_forged_or_foreign_values_are_refused(raw: str) -> None:
    with pytest.raises(CodecError):
        parse_snooze_value(raw)


@SETTINGS
@given(mention_texts(400))
def test_a_snoozed_dm_card_is_one_line_with_unsnooze_within_limits(title: str) -> None:
    message = snoozed_card(make_task(title=title), snooze(), kandev_url=KANDEV_URL)
    assert_valid_message(message)
    assert_cannot_notify(message)
    line, row = message["blocks"]
    assert line["block_id"] == "kq_snoozed"
    assert line["text"]["text"].startswith("💤 Snoozed until <!date^")
    (unsnooze,) = row["elements"]
    assert unsnooze["action_id"] == ids.ACTION_UNSNOOZE
    assert parse_button_value(unsnooze["value"]).pending_id == "p-1"


def test_the_select_goes_in_the_quiet_row_before_open_in_kandev() -> None:
    row = {
        "type": "actions",
        "block_id": ids.BLOCK_MORE,
        "elements": [{"type": "button", "action_id": "a"}, {"type": "button", "action_id": "o"}],
    }
    blocks = with_snooze_select([{"type": "section"}, row], "p-1")
    assert len(blocks) == 2  # no block added
    assert [e["action_id"] for e in blocks[1]["elements"]] == ["a", ids.ACTION_SNOOZE, "o"]
    assert [e["action_id"] for e in row["elements"]] == ["a", "o"]  # the input is unchanged


@SETTINGS
@given(st.lists(mention_texts(300), min_size=0, max_size=MAX_SNOOZED_SHOWN + 3))
def test_home_lists_the_snoozed_items_with_unsnooze_within_limits(titles: list[str]) -> None:
    snoozed = [
        (make_task(f"t-{i}", title=title), snooze(f"p-{i}")) for i, title in enumerate(titles)
    ]
    view = render_home([], [], kandev_url=KANDEV_URL, now=NOW, snoozed=snoozed)
    assert validate_view("views.publish", view) == []
    assert_cannot_notify(view)
    rows = snoozed_home_blocks(snoozed, kandev_url=KANDEV_URL)
    if not titles:
        assert rows == []
        return
    assert rows[0]["text"]["text"] == f"💤 Snoozed ({len(titles)})"
    shown = [b for b in rows if b.get("accessory")]
    assert len(shown) == min(len(titles), MAX_SNOOZED_SHOWN)
    assert all(b["accessory"]["action_id"] == ids.ACTION_UNSNOOZE for b in shown)


def test_the_listing_and_the_thread_notice_say_what_happened() -> None:
    assert snoozed_in_listing(1) == (
        "💤 1 question snoozed by you is not listed: *Unsnooze* it on your App Home."
    )
    assert snoozed_in_listing(3).startswith("💤 3 questions snoozed by you are not listed")
    task = make_task(title="Pick a datastore")
    assert back_text(task) == (
        "⏰ Back from snooze: Pick a datastore is still waiting for an answer"
    )
    assert_text_cannot_notify(back_text(make_task(title="<!here> & <@U0ANA>")))


def test_an_empty_listing_still_says_what_the_person_snoozed() -> None:
    page = ListingPage(
        query=Query(),
        workspace=None,
        items=[],
        total=0,
        first=1,
        number=1,
        next_after=None,
        snoozed=2,
    )
    rendered = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(rendered)
    texts = str(rendered["blocks"])
    assert "Nothing is waiting for an answer right now" in texts
    assert "💤 2 questions snoozed by you are not listed" in texts
    quiet = ListingPage(
        query=Query(), workspace=None, items=[], total=0, first=1, number=1, next_after=None
    )
    assert "snoozed" not in str(render_listing(quiet, kandev_url=KANDEV_URL, now=NOW)["blocks"])
