"""ListingService.reply: what ``/kandev-questions`` answers one person."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kandev_slack.cards import ids
from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.kandev.errors import KandevAuthError, KandevProtocolError
from kandev_slack.kits.fakeslack import blocks_text
from kandev_slack.surfaces.listing import parse_next_page
from kandev_slack.usecases.views.listing import MAX_FILTER, ListingService, Reply
from kandev_slack.usecases.views.waiting import WaitingQueue
from tests.kit.factories import ALICE_ID, CHANNEL, KANDEV_URL, make_questions, numbered_bundle
from tests.kit.fakes import FakeKandev

BOB_ID = "U0BOB00002"


@pytest.fixture
def routing() -> Routing:
    """Platform's questions are Alice's, Data's are Bob's."""
    rules = (
        RouteRule(workspace="Platform", channel=None, answerers=frozenset({ALICE_ID}), line=1),
        RouteRule(workspace="Data", channel="C0DATA", answerers=frozenset({BOB_ID}), line=2),
    )
    return Routing(default_channel=CHANNEL, rules=rules)


@pytest.fixture
def listing(queue: WaitingQueue, fake_kandev: FakeKandev) -> ListingService:
    return ListingService(queue, fake_kandev, kandev_url=KANDEV_URL, page_size=2)


@pytest.fixture
def waiting(fake_kandev: FakeKandev) -> None:
    """Three Platform bundles (tasks "Platform 1…3") and one Data bundle ("Data 4")."""
    for n in (1, 2, 3):
        fake_kandev.add(numbered_bundle(n), title=f"Platform {n}", workspace_name="Platform")
    fake_kandev.add(
        numbered_bundle(4, *make_questions(1, title="Warehouse")),
        title="Data 4",
        workspace_id="ws-2",
        workspace_name="Data",
    )


def shown(reply: Reply) -> str:
    return blocks_text(reply.blocks)


def next_value(reply: Reply, label: str | None = None) -> str | None:
    for block in reply.blocks:
        for element in block.get("elements", []):
            if (
                isinstance(element, dict)
                and element.get("action_id") in (ids.ACTION_NEXT, ids.ACTION_PREVIOUS)
                and (label is None or element["text"]["text"] == label)
            ):
                return element["value"]
    return None


@pytest.mark.usefixtures("waiting")
def test_each_person_is_listed_only_what_they_may_answer(listing: ListingService) -> None:
    alice = shown(listing.reply("", ALICE_ID))
    bob = shown(listing.reply("", BOB_ID))
    stranger = shown(listing.reply("", "U0STRANGER"))

    assert "Platform 1" in alice and "Data 4" not in alice
    assert "Data 4" in bob and "Platform 1" not in bob and "Which database" in bob
    assert stranger.startswith("Nothing is waiting for an answer")


@pytest.mark.usefixtures("waiting")
def test_a_filter_by_workspace_name_or_by_words(listing: ListingService) -> None:
    assert "Data 4" in shown(listing.reply("data", BOB_ID))
    assert "Data 4" not in shown(listing.reply("platform", BOB_ID))
    by_words = shown(listing.reply("platform 2", ALICE_ID))
    assert "Platform 2" in by_words and "Platform 1" not in by_words


@pytest.mark.usefixtures("waiting")
def test_filter_words_match_whole_words_not_inside_words(listing: ListingService) -> None:
    """bolt-python's sample ``/kandev-questions Hi`` must not list "Which database…"."""
    assert "Nothing waiting matches" in shown(listing.reply("Hi", ALICE_ID))
    assert "Nothing waiting matches" in shown(listing.reply("base", ALICE_ID))  # not "database"
    assert "Nothing waiting matches" in shown(listing.reply("form", ALICE_ID))  # not "Platform"
    assert "3 questions are waiting" in shown(listing.reply("WHICH database?", ALICE_ID))
    assert "Platform 2" in shown(listing.reply("use", ALICE_ID))


@pytest.mark.usefixtures("waiting")
def test_pages_follow_the_last_bundle_shown(
    listing: ListingService, fake_kandev: FakeKandev
) -> None:
    first = listing.reply("", ALICE_ID)
    assert "Platform 1" in shown(first) and "Platform 2" in shown(first)
    assert "Platform 3" not in shown(first)
    value = next_value(first)
    assert value is not None
    wanted = parse_next_page(value)

    del fake_kandev.active["pending-001"]  # answered meanwhile: the next page skips nothing
    second = listing.reply(wanted.filter, ALICE_ID, wanted=wanted)

    assert "Platform 3" in shown(second) and "Platform 2" not in shown(second)
    assert next_value(second, "Next page") is None
    back = next_value(second, "Previous page")
    assert back is not None
    wanted = parse_next_page(back)
    assert wanted.backwards and wanted.number == 1
    again = listing.reply(wanted.filter, ALICE_ID, wanted=wanted)
    assert "Platform 2" in shown(again) and "Platform 3" not in shown(again)
    assert next_value(again, "Previous page") is None


@pytest.mark.usefixtures("waiting")
def test_critical_questions_come_first_and_are_summarised_on_top(
    listing: ListingService, fake_kandev: FakeKandev
) -> None:
    fake_kandev.add(
        numbered_bundle(9), title="Urgent 9", workspace_name="Platform", priority="critical"
    )
    first = shown(listing.reply("", ALICE_ID))
    assert "🔴 1 critical — listed first" in first
    assert first.index("Urgent 9") < first.index("Platform 1")


def test_help_and_a_too_long_filter_are_answered_without_kandev(
    listing: ListingService, fake_kandev: FakeKandev
) -> None:
    help_text = shown(listing.reply("help", ALICE_ID))
    too_long = shown(listing.reply("x" * (MAX_FILTER + 1), ALICE_ID))

    assert ids.COMMAND in help_text
    assert f"{MAX_FILTER + 1}" in too_long
    assert fake_kandev.calls == []


def test_kandev_unreachable_is_said_with_its_address(
    listing: ListingService, fake_kandev: FakeKandev
) -> None:
    fake_kandev.fail()

    reply = listing.reply("", ALICE_ID)

    assert "kandev.example.test" in shown(reply) + reply.text
    assert "Platform" not in shown(reply)


@pytest.mark.parametrize(
    ("error", "says"),
    [(KandevAuthError(), "KANDEV_TOKEN"), (KandevProtocolError("bad page"), "bad page")],
    ids=["token-refused", "unexpected-reply"],
)
def test_other_kandev_failures_are_said(
    listing: ListingService, fake_kandev: FakeKandev, error: Exception, says: str
) -> None:
    fake_kandev.fail("list_listed", error)

    reply = listing.reply("", ALICE_ID)

    assert says in shown(reply) + reply.text


@pytest.mark.usefixtures("waiting")
def test_a_listing_computes_in_its_turn_after_reading_kandevs_list(
    queue: WaitingQueue, fake_kandev: FakeKandev
) -> None:
    """Kandev's list is read before the turn is taken (overlapping reads can then share one),
    and the page is computed within it."""
    seen: list[str] = []

    @contextmanager
    def turn() -> Iterator[None]:
        seen.append(f"turn after {len(fake_kandev.calls)} Kandev calls")
        yield
        seen.append("turn over")

    listing = ListingService(queue, fake_kandev, kandev_url=KANDEV_URL, page_size=2, computing=turn)
    calls_before = len(fake_kandev.calls)

    reply = listing.reply("", ALICE_ID)

    reads = [m for m, _ in fake_kandev.calls[calls_before:] if m == "list_listed"]
    assert reads == ["list_listed"]
    read_at = [m for m, _ in fake_kandev.calls].index("list_listed", calls_before) + 1
    assert seen == [f"turn after {read_at} Kandev calls", "turn over"]
    assert "Platform 1" in shown(reply)
