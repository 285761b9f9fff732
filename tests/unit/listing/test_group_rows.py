"""Identical items waiting in one channel are one row in the listing and on the App Home
(issue 33): the grouping of rows (kandev_slack.usecases.views.waiting.py) and their rendering."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_slack.cards.ids import (
    ACTION_ANSWER_MODAL,
    ACTION_CONVERSATION,
    ACTION_SNOOZE,
    parse_snooze_value,
)
from kandev_slack.core.domain import Card
from kandev_slack.core.groups import GroupPlace
from kandev_slack.core.limits import MAX_PAGE_SIZE
from kandev_slack.core.snooze import SNOOZE_HOURS
from kandev_slack.kinds.approval.cards.rows import approvals_blocks
from kandev_slack.kits.fakeslack import blocks_text, iter_elements
from kandev_slack.surfaces.home import MAX_WAITING, render_home
from kandev_slack.surfaces.listing import item_blocks, render_listing
from kandev_slack.surfaces.waiting import ListingPage, Query, Waiting
from kandev_slack.usecases.views.waiting import MAX_ROW, group_approvals, group_rows, items_in
from tests.kit.factories import KANDEV_URL, NOW, make_task, waiting
from tests.unit.cards.safety import assert_cannot_notify
from tests.unit.cards.strategies import bundles, mention_texts, tasks_for
from tests.unit.kinds.approval.cards.test_card import approval
from tests.unit.listing.checks import assert_valid_home, assert_valid_message
from tests.unit.properties import examples

KEY = "ws-Platform|database"


def link(n: int) -> str:
    return f"https://team.slack.com/archives/C0QUESTION/p17000000000{n:05d}"


def ids(rows: list[Waiting]) -> list[list[str]]:
    return [[m.pending_id for m in row.members] for row in rows]


# ---- the grouping ------------------------------------------------------------------------------


def test_identical_items_in_one_channel_are_one_row_led_by_the_channel_card() -> None:
    a, b, c, d = (waiting(n) for n in (1, 2, 3, 4))
    places = {
        a.pending_id: GroupPlace(KEY, "C1", thread_of=c.pending_id),  # in c's thread
        b.pending_id: GroupPlace("other", "C1"),
        c.pending_id: GroupPlace(KEY, "C1"),  # the channel card
        d.pending_id: GroupPlace(KEY, "C1", thread_of=c.pending_id),
    }
    rows = group_rows([a, b, c, d], places)
    # The row stands where its first card stands; the others leave their places.
    assert ids(rows) == [[b.pending_id], [c.pending_id, a.pending_id, d.pending_id]]
    assert rows[1].count == 3 and items_in(rows) == 4
    assert rows[0] == b  # an item alone is as it was


def test_identical_items_in_different_channels_or_unposted_stay_apart() -> None:
    a, b, c = (waiting(n) for n in (1, 2, 3))
    places = {a.pending_id: GroupPlace(KEY, "C1"), b.pending_id: GroupPlace(KEY, "C2")}
    assert group_rows([a, b, c], places) == [a, b, c]


def test_without_its_channel_card_a_group_is_led_by_its_first_item() -> None:
    # (the channel card is another route's, or resolved: the person sees only the thread)
    a, b = waiting(1), waiting(2)
    places = {
        a.pending_id: GroupPlace(KEY, "C1", thread_of="gone"),
        b.pending_id: GroupPlace(KEY, "C1", thread_of="gone"),
    }
    assert ids(group_rows([a, b], places)) == [[a.pending_id, b.pending_id]]


def test_a_very_large_group_is_several_rows() -> None:
    items = [waiting(n) for n in range(1, MAX_ROW + 3)]
    places = {it.pending_id: GroupPlace(KEY, "C1") for it in items}
    rows = group_rows(items, places)
    assert [r.count for r in rows] == [MAX_ROW, 2]
    assert items_in(rows) == len(items)


# ---- the rendering -----------------------------------------------------------------------------


def group_row(size: int = 3) -> Waiting:
    members = [waiting(n, permalink=link(n)) for n in range(1, size + 1)]
    return replace(members[0], others=tuple(members[1:]))


def answer_buttons(blocks: list[dict]) -> list[str]:
    return [
        r.element["text"]["text"]
        for r in iter_elements(blocks)
        if r.type == "button" and r.element["action_id"] == ACTION_ANSWER_MODAL
    ]


def test_the_listing_shows_a_group_as_one_row_with_answer_for_all_and_a_link_to_each() -> None:
    alone = waiting(9, task_title="Pick a queue", permalink=link(9))
    row = group_row(3)
    page = ListingPage(
        query=Query(),
        workspace=None,
        items=[row, alone],
        total=4,
        first=1,
        number=1,
        next_after=None,
    )
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)
    text = blocks_text(message["blocks"])
    assert "4 questions are waiting" in text
    assert "showing" not in text  # the page shows all 4 items (in 2 rows)
    assert "*3 agents*" in text
    for n in (1, 2, 3):
        assert f"<{link(n)}|{n}>" in text
    assert f"<{link(9)}|View card>" in text  # the item alone is as today
    assert answer_buttons(message["blocks"]) == ["Answer for all…", "Answer…"]


def snooze_selects(blocks: list[dict]) -> list[dict]:
    return [r.element for r in iter_elements(blocks) if r.element.get("action_id") == ACTION_SNOOZE]


def test_the_listing_s_group_row_offers_snooze_for_the_whole_group() -> None:
    row, alone = group_row(3), waiting(9, permalink=link(9))
    page = ListingPage(
        query=Query(),
        workspace=None,
        items=[row, alone],
        total=4,
        first=1,
        number=1,
        next_after=None,
    )
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)
    [select] = snooze_selects(message["blocks"])  # the group row's; the item alone has none
    values = [parse_snooze_value(o["value"]) for o in select["options"]]
    assert [(v.pending_id, v.hours, v.group) for v in values] == [
        (row.pending_id, hours, True) for hours in SNOOZE_HOURS
    ]
    # Still two blocks a row, its details ("Workspace", when asked) beside its headline, and
    # Conversation beside Snooze…
    blocks = item_blocks(row, kandev_url=KANDEV_URL, now=NOW)
    assert [b["type"] for b in blocks] == ["section", "actions"]
    assert "*3 agents*" in blocks[0]["text"]["text"] and "Workspace" in blocks[0]["text"]["text"]
    assert [e["action_id"] for e in blocks[1]["elements"]] == [ACTION_CONVERSATION, ACTION_SNOOZE]


def test_a_group_row_whose_id_does_not_fit_a_snooze_value_keeps_its_conversation() -> None:
    row = group_row(2)
    long_id = "p" * 200  # longer than an option's value may be: Snooze… is not offered
    row = replace(row, listed=row.bundle.model_copy(update={"pending_id": long_id}))
    blocks = item_blocks(row, kandev_url=KANDEV_URL, now=NOW)
    assert [e["action_id"] for e in blocks[1]["elements"]] == [ACTION_CONVERSATION]


def test_a_group_of_several_question_bundles_is_answered_card_by_card() -> None:
    members = [waiting(n, questions=2, permalink=link(n)) for n in (1, 2)]
    row = replace(members[0], others=(members[1],))
    home = render_home([row], [], kandev_url=KANDEV_URL, now=NOW)
    assert answer_buttons(home["blocks"]) == ["Answer…"]
    assert "*2 agents*" in blocks_text(home["blocks"])


def test_the_home_shows_a_group_as_one_row_counted_as_its_items() -> None:
    home = render_home([group_row(3), waiting(9)], [], kandev_url=KANDEV_URL, now=NOW)
    assert_valid_home(home)
    text = blocks_text(home["blocks"])
    assert "4 questions are waiting" in text and "*3 agents*" in text
    assert answer_buttons(home["blocks"]) == ["Answer for all…", "Answer…"]
    # Beyond the shown rows, the rest is counted as items.
    rows = [group_row(2) for _ in range(MAX_WAITING + 1)]
    text = blocks_text(render_home(rows, [], kandev_url=KANDEV_URL, now=NOW)["blocks"])
    assert "…and 2 more" in text


# ---- within Block Kit's limits, whatever agents wrote ---------------------------------------

PROPERTY = settings(
    max_examples=examples(15),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LONG_LINK = "https://team.slack.com/archives/C0QUESTION/p1700000000000100?thread_ts=1700000000.000100&cid=C0QUESTION"  # noqa: E501


@st.composite
def group_rows_drawn(draw) -> Waiting:
    size = draw(st.integers(min_value=2, max_value=MAX_ROW))
    members = []
    for _ in range(size):
        bundle = draw(bundles(mention_texts))
        task = draw(tasks_for(bundle, mention_texts))
        members.append(Waiting(listed=bundle, task=task, permalink=LONG_LINK))
    return replace(members[0], others=tuple(members[1:]))


@PROPERTY
@given(row=group_rows_drawn(), size=st.integers(min_value=1, max_value=MAX_PAGE_SIZE))
def test_full_pages_of_group_rows_stay_within_block_kit(row: Waiting, size: int) -> None:
    rows = [row] * size
    page = ListingPage(
        query=Query(),
        workspace=None,
        items=rows,
        total=items_in(rows) + 5,
        first=1,
        number=1,
        next_after=rows[-1].key,
    )
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)
    assert_cannot_notify(message)
    home = render_home([row] * MAX_WAITING, [], kandev_url=KANDEV_URL, now=NOW)
    assert_valid_home(home)
    assert_cannot_notify(home)


# ---- approvals group the same way -------------------------------------------------------------


def approval_card(n: int, *, channel: str = "C1", thread_of: str | None = None) -> Card:
    item = approval(task_id=f"t-{n}", session_id=f"s-{n}", request_id=f"r-{n}")
    return Card(
        pending_id=item.item_id,
        task_id=f"t-{n}",
        session_id=f"s-{n}",
        channel=channel,
        ts=f"1.{n}",
        item=item,
        task=make_task(f"t-{n}", title=f"Approval task {n}"),
        created_at=NOW,
        updated_at=NOW,
        thread_of=thread_of,
    )


def test_identical_approvals_in_one_channel_are_one_row_counted_as_theirs() -> None:
    first = approval_card(1)
    rows = [
        (approval_card(2, thread_of=first.pending_id), link(2)),
        (first, link(1)),
        (approval_card(3, thread_of=first.pending_id), None),
        (approval_card(4, channel="C2"), link(4)),  # another channel: its own row
    ]
    left, others = group_approvals(rows)
    assert [c.pending_id for c, _ in left] == [first.pending_id, rows[3][0].pending_id]
    assert [c.pending_id for c, _ in others[first.pending_id]] == [
        rows[0][0].pending_id,
        rows[2][0].pending_id,
    ]
    blocks = approvals_blocks(left, kandev_url=KANDEV_URL, limit=3, others=others)
    text = blocks_text(blocks)
    assert "4 approvals wait" in text and "*3 agents*: " in text
    assert f"<{link(1)}|1> · <{link(2)}|2> · <" in text and "/t/t-3|3>" in text
    assert text.count("View card") == 1  # the approval alone, as today
    # Beyond the limit, the rest is counted as approvals.
    text = blocks_text(approvals_blocks(left[:1], kandev_url=KANDEV_URL, limit=0, others=others))
    assert "…and 3 more" in text
