"""Identical items in one channel as their cards show them (kandev_slack/cards/parts/groups.py,
composed by kandev_slack/surfaces/kinds.py): the
first card's line counting those waiting in its thread, the "Also from" line heading each card
in that thread — linked to the tasks, within Slack's limits whatever the agents' titles say,
notifying nobody, and never making a card Slack would refuse."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards.limits import MAX_MESSAGE_BLOCKS
from kandev_slack.cards.parts.groups import (
    BLOCK_ALSO_FROM,
    BLOCK_THREAD,
    also_from_line,
    thread_line,
    with_lines,
)
from kandev_slack.core.domain import CardState
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.kinds.question.cards.card import render_card
from tests.kit.factories import KANDEV_URL, NOW
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.strategies import bundles, mention_texts, outcomes_for, tasks_for, texts
from tests.unit.cards.test_limits_property import SETTINGS


def _also(n: int, title: str = "") -> AlsoAsked:
    return AlsoAsked(pending_id=f"p-{n}", task_id=f"task-{n}", title=title or f"Task {n}")


def test_the_first_card_counts_those_waiting_in_its_thread_and_links_five() -> None:
    assert thread_line([], 0, kandev_url=KANDEV_URL) == ""
    one = thread_line([_also(2)], 1, kandev_url=KANDEV_URL)
    assert one == (
        f"🧵 1 more agent asked this: <{KANDEV_URL}/t/task-2|Task 2> — its card is in this thread."
    )
    many = thread_line([_also(n) for n in range(6)], 9, kandev_url=KANDEV_URL)
    assert many.startswith("🧵 9 more agents asked this: ") and many.count("|Task") == 5
    assert ", … — each has its card in this thread." in many


def test_a_card_in_a_thread_says_which_task_it_is_from() -> None:
    line = also_from_line(_also(3, "Fix *the* <build>"), kandev_url=KANDEV_URL)
    assert line.startswith(f"↪️ Also from <{KANDEV_URL}/t/task-3|")
    assert "<build>" not in line  # the agent's title is escaped


def test_the_lines_go_above_and_below_and_lead_the_notification() -> None:
    rendered = {"text": "Which database?", "blocks": [{"type": "divider"}]}
    out = with_lines(rendered, first="↪️ Also from x", last="🧵 1 more")
    assert [b.get("block_id") for b in out["blocks"]] == [BLOCK_ALSO_FROM, None, BLOCK_THREAD]
    assert out["text"] == "↪️ Also from x · Which database?"


def test_a_card_with_no_room_left_keeps_its_blocks_as_they_are() -> None:
    full = {"text": "t", "blocks": [{"type": "divider"}] * MAX_MESSAGE_BLOCKS}
    out = with_lines(full, first="↪️ Also from x", last="🧵 1 more")
    assert out["blocks"] == full["blocks"]


@SETTINGS
@given(data=st.data())
def test_every_card_of_identical_items_stays_within_limits_and_notifies_nobody(data) -> None:
    bundle = data.draw(bundles(text=mention_texts))
    task = data.draw(tasks_for(bundle))
    state = data.draw(st.sampled_from(list(CardState)))
    outcome = data.draw(outcomes_for(bundle, state))
    titles = data.draw(st.lists(st.one_of(texts(400), mention_texts(400)), max_size=8))
    count = data.draw(st.integers(min_value=len(titles), max_value=60))
    card = render_card(bundle, task, state, outcome, kandev_url=KANDEV_URL, now=NOW)
    in_thread = data.draw(st.booleans())
    first = also_from_line(_also(0, titles[0] if titles else ""), kandev_url=KANDEV_URL)
    shown = [_also(n, t) for n, t in enumerate(titles)]
    last = thread_line(shown, count, kandev_url=KANDEV_URL)
    out = with_lines(card, first=first if in_thread else "", last="" if in_thread else last)
    assert_valid_message(out, allowed_users={"U0123ABC"})
