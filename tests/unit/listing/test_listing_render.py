"""Rendering of /kandev-questions: pages within Block Kit limits, the buttons' values, the empty
states, help and errors."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_slack.cards.ids import (
    ACTION_ANSWER_MODAL,
    ACTION_NEXT,
    ACTION_PREVIOUS,
    CodecError,
    parse_button_value,
)
from kandev_slack.cards.words import filter_too_long_message, kandev_unreachable_message
from kandev_slack.kandev.models import Workspace
from kandev_slack.kits.fakeslack import blocks_text, iter_elements
from kandev_slack.surfaces.listing import (
    MAX_PAGE_SIZE,
    NextPage,
    parse_next_page,
    render_help,
    render_listing,
    render_problem,
)
from kandev_slack.surfaces.waiting import ListingPage, Query, Waiting
from kandev_slack.usecases.views.listing import parse_query
from tests.kit.factories import KANDEV_URL, NOW, resolved_card, waiting
from tests.unit.cards.strategies import bundles, tasks_for
from tests.unit.listing.checks import assert_valid_message
from tests.unit.properties import examples

PAGERS = (ACTION_NEXT, ACTION_PREVIOUS)


def page_of(items: list[Waiting], **fields) -> ListingPage:
    base = {
        "query": Query(),
        "workspace": None,
        "items": items,
        "total": len(items),
        "first": 1,
        "number": 1,
        "next_after": None,
    }
    return ListingPage(**{**base, **fields})


def buttons(message: dict) -> list[dict]:
    return [r.element for r in iter_elements(message["blocks"]) if r.type == "button"]


def test_a_page_shows_task_workspace_age_questions_card_and_answer_button() -> None:
    item = waiting(
        1,
        task_title="Pick a datastore",
        questions=2,
        permalink="https://team.slack.com/archives/C0QUESTION/p1700000000000001",
    )
    message = render_listing(page_of([item]), kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)
    text = blocks_text(message["blocks"])
    assert "1 question is waiting for an answer" in text
    assert "<https://kandev.example.test/t/task-001|Pick a datastore>" in text
    # the questions themselves, not their titles
    assert "1/2 · Which database should we use? · 2/2 · Which database should we use?" in text
    assert "Workspace *Platform* · asked <!date^1796023252^{date_short_pretty} at {time}|" in text
    assert "<https://team.slack.com/archives/C0QUESTION/p1700000000000001|View card>" in text
    [answer, conversation] = buttons(message)
    assert conversation["text"]["text"] == "Conversation"
    assert answer["action_id"] == ACTION_ANSWER_MODAL
    assert answer["text"]["text"] == "Answer…"
    assert parse_button_value(answer["value"]).pending_id == "pending-001"
    assert "Pick a datastore" in message["text"]


def test_the_listing_converts_kandev_markdown_as_the_cards_do() -> None:
    item = waiting(
        1, prompt="Which **orders** table: `orders_v2` or [the old one](https://x.example)?"
    )
    text = blocks_text(render_listing(page_of([item]), kandev_url=KANDEV_URL, now=NOW)["blocks"])
    assert "Which *orders* table: `orders_v2` or <https://x.example|the old one>?" in text
    assert "**" not in text


def test_a_bundle_without_a_card_says_so() -> None:
    message = render_listing(page_of([waiting(1)]), kandev_url=KANDEV_URL, now=NOW)
    assert "no card posted yet" in blocks_text(message["blocks"])


def test_a_full_page_has_a_next_button_carrying_filter_and_position() -> None:
    items = [waiting(n, age_s=5000 - n) for n in range(1, MAX_PAGE_SIZE + 1)]
    page = page_of(
        items,
        query=parse_query("datastore"),
        total=2 * MAX_PAGE_SIZE + 7,
        first=MAX_PAGE_SIZE + 1,
        number=2,
        next_after=items[-1].key,
    )
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)
    assert len(message["blocks"]) <= 50
    text = blocks_text(message["blocks"])
    assert "matching “datastore”" in text
    assert f"showing {MAX_PAGE_SIZE + 1}–{2 * MAX_PAGE_SIZE}" in text
    assert "Page 2 · 7 more" in text
    [next_button] = [b for b in buttons(message) if b["action_id"] == ACTION_NEXT]
    wanted = parse_next_page(next_button["value"])
    assert wanted.filter == "datastore"
    assert wanted.after == items[-1].key
    assert wanted.number == 3


def test_a_middle_page_pages_both_ways() -> None:
    items = [waiting(n) for n in range(11, 13)]
    page = page_of(
        items,
        total=30,
        first=11,
        number=2,
        next_after=items[-1].key,
        previous_before=items[0].key,
        previous_rank=0,
    )
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)  # distinct action ids
    labels = [b["text"]["text"] for b in buttons(message) if b["action_id"] in PAGERS]
    assert labels == ["Previous page", "Next page"]
    [back] = [b for b in buttons(message) if b["action_id"] == ACTION_PREVIOUS]
    wanted = parse_next_page(back["value"])
    assert wanted.backwards and wanted.after == items[0].key
    assert (wanted.number, wanted.rank) == (1, 0)


def test_critical_and_high_questions_are_summarised_on_top() -> None:
    page = page_of([waiting(1)], urgent=(2, 1))
    text = blocks_text(render_listing(page, kandev_url=KANDEV_URL, now=NOW)["blocks"])
    assert "most urgent first, then oldest\n🔴 2 critical · 🟠 1 high — listed first" in text


def test_the_first_page_has_no_previous_button() -> None:
    page = page_of([waiting(1)], total=11, next_after=waiting(1).key)
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert all(b["action_id"] != ACTION_PREVIOUS for b in buttons(message))


def test_the_last_page_has_no_next_button() -> None:
    page = page_of([waiting(1)], total=11, first=11, number=2)
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert all(b["action_id"] != ACTION_NEXT for b in buttons(message))
    assert "Page 2 · the last one" in blocks_text(message["blocks"])


@pytest.mark.parametrize("raw", ["", "nope", '{"f":"x"}', '{"a":"2026-01-01T00:00:00Z","i":""}'])
def test_a_next_value_we_did_not_make_is_refused(raw: str) -> None:
    with pytest.raises(CodecError):
        parse_next_page(raw)


def test_the_longest_filter_fits_in_the_next_button() -> None:
    value = NextPage(filter='"\\🙂' * 66 + "xx", after_at=NOW, after_id="p" * 36, number=99)
    assert len(value.encode()) <= 2000
    assert parse_next_page(value.encode()) == value


def test_empty_states() -> None:
    nothing = render_listing(page_of([]), kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(nothing)
    assert "Nothing is waiting for an answer right now" in nothing["text"]

    no_match = page_of([], query=parse_query("kafka"), workspace_names=("Default", "Platform"))
    message = render_listing(no_match, kandev_url=KANDEV_URL, now=NOW)
    assert "Nothing waiting matches “kafka”" in message["text"]
    assert "Workspaces: Default, Platform" in message["text"]
    assert "/kandev-questions help" in message["text"]

    in_workspace = page_of(
        [], query=parse_query("platform"), workspace=Workspace(id="ws-2", name="Platform")
    )
    message = render_listing(in_workspace, kandev_url=KANDEV_URL, now=NOW)
    assert "Nothing is waiting for an answer in workspace *Platform*" in message["text"]


def test_help_and_errors_are_valid_messages() -> None:
    assert_valid_message(render_help())
    assert "/kandev-questions Platform" in render_help()["blocks"][0]["text"]["text"]
    for text in (
        filter_too_long_message(250, 200),
        kandev_unreachable_message("http://127.0.0.1:1"),
    ):
        assert_valid_message(render_problem(text))
    assert "http://127.0.0.1:1" in kandev_unreachable_message("http://127.0.0.1:1")


def test_untrusted_text_cannot_ping_or_forge_links() -> None:
    item = waiting(
        1,
        task_title="<!channel> <https://evil.example|click> & co",
        workspace="<!here>",
        title="<@U0EVIL> title",
    )
    message = render_listing(
        page_of([item], query=parse_query("<!channel>")), kandev_url=KANDEV_URL, now=NOW
    )
    assert_valid_message(message)
    assert "<!channel>" not in message["text"]


@st.composite
def waiting_items(draw) -> Waiting:
    b = draw(bundles())
    link = draw(st.sampled_from([None, "https://team.slack.com/archives/C1/p1"]))
    return Waiting(listed=b, task=draw(tasks_for(b)), permalink=link)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(waiting_items(), min_size=1, max_size=3),
    query=st.text(max_size=200),
)
def test_any_page_stays_within_block_kit_limits(items: list[Waiting], query: str) -> None:
    parsed = parse_query(query)
    parsed = parsed if isinstance(parsed, Query) else Query()
    page = page_of(items, query=parsed, total=len(items) + 5, next_after=items[-1].key)
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)


def test_the_page_size_fits_the_block_limit() -> None:
    huge = {"task_title": "T" * 5000, "title": "<!here> " * 40, "questions": 4}
    items = [waiting(n, workspace="W" * 3000, **huge) for n in range(MAX_PAGE_SIZE)]
    page = page_of(items, query=parse_query("x" * 200), total=100, next_after=items[-1].key)
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)
    assert len(message["blocks"]) <= 50


def test_the_shortcut_on_a_closed_card_states_how_it_ended() -> None:
    from kandev_slack.cards.words import closed_card_message
    from kandev_slack.core.domain import CardState

    card = resolved_card(1, CardState.ANSWERED)
    assert card.outcome is not None
    assert closed_card_message(card.outcome, card.bundle) == (
        "This question is already closed: ✅ Answered by <@U0ALICE001> in Slack: MongoDB. "
        "Nothing to reject."
    )
