"""Rendering of the App Home tab: both sections, their limits, the buttons, the stale notice."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_slack.cards.ids import ACTION_ANSWER_MODAL, ACTION_OPEN, parse_button_value
from kandev_slack.core.domain import CardState
from kandev_slack.kits.fakeslack import blocks_text, iter_elements
from kandev_slack.surfaces.home import MAX_RESOLVED, MAX_WAITING, render_home
from kandev_slack.surfaces.waiting import Waiting
from tests.kit.factories import KANDEV_URL, NOW, resolved_card, waiting
from tests.unit.cards.strategies import bundles, tasks_for
from tests.unit.listing.checks import assert_valid_home
from tests.unit.properties import examples

ALICE = "U0ALICE001"


def test_waiting_and_recently_resolved() -> None:
    items = [
        waiting(1, task_title="Oldest task", age_s=7200, questions=3),
        waiting(2, task_title="Newer task", age_s=60, permalink="https://t.slack.com/a/C1/p2"),
    ]
    resolved = [
        (resolved_card(1, CardState.ANSWERED), "https://t.slack.com/a/C1/p9"),
        (resolved_card(2, CardState.REJECTED), None),
        (resolved_card(3, CardState.ENDED, by_user=None), None),
    ]
    view = render_home(items, resolved, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_home(view, allowed_users=(ALICE,))
    assert view["type"] == "home"
    text = blocks_text(view["blocks"])
    assert text.index("Waiting for an answer") < text.index("Oldest task")
    assert text.index("Oldest task") < text.index("Newer task") < text.index("Recently resolved")
    assert "2 questions are waiting for an answer, critical first, then oldest" in text
    assert "*1/3 · Database* — Which database should we use?" in text
    assert "_+2 more questions_" in text
    assert "asked <!date^" in text and " ago" not in text  # no age frozen into the view
    assert "UTC> · Workspace *Platform* · <https://t.slack.com/a/C1/p2|View card>" in text
    # "Open in Kandev" is a link: one primary button a row, Answer…, and quiet Conversation.
    assert "<https://kandev.example.test/t/task-002|Open in Kandev>" in text
    assert f"✅ Answered by <@{ALICE}> in Slack: MongoDB" in text
    assert f"⛔ Rejected by <@{ALICE}> in Slack: “not now”" in text
    assert "⏹ Ended — nobody answered" in text

    elements = [r.element for r in iter_elements(view["blocks"]) if r.type == "button"]
    answers = [e for e in elements if e["action_id"] == ACTION_ANSWER_MODAL]
    assert [parse_button_value(e["value"]).pending_id for e in answers] == [
        "pending-001",
        "pending-002",
    ]
    assert all(e.get("style") == "primary" for e in answers)
    assert [e["action_id"] for e in elements if e.get("style") == "primary"] == [
        ACTION_ANSWER_MODAL,
        ACTION_ANSWER_MODAL,
    ]
    assert [e for e in elements if e["action_id"] == ACTION_OPEN] == []


def test_empty_home() -> None:
    view = render_home([], [], kandev_url=KANDEV_URL, now=NOW)
    assert_valid_home(view)
    text = blocks_text(view["blocks"])
    assert "Nothing is waiting for an answer." in text
    assert "0 questions" not in text and "waiting for an answer, " not in text  # said once
    assert "Nothing resolved yet." in text


def test_stale_notice_when_kandev_cannot_be_asked() -> None:
    view = render_home([waiting(1)], [], kandev_url=KANDEV_URL, now=NOW, stale=True)
    assert "Kandev cannot be reached right now" in blocks_text(view["blocks"])


def test_many_items_are_counted_not_shown() -> None:
    huge = {"task_title": "T" * 5000, "prompt": "<!channel> word " * 700, "questions": 4}
    items = [waiting(n, age_s=10_000 - n, **huge) for n in range(MAX_WAITING + 7)]
    resolved = [(resolved_card(n, CardState.ANSWERED), None) for n in range(MAX_RESOLVED + 5)]
    view = render_home(items, resolved, kandev_url=KANDEV_URL, now=NOW, stale=True)
    assert_valid_home(view, allowed_users=(ALICE,))
    text = blocks_text(view["blocks"])
    assert "…and 7 more: `/kandev-questions` lists them all." in text
    assert text.count("Resolved task") == MAX_RESOLVED


@st.composite
def waiting_items(draw) -> Waiting:
    b = draw(bundles())
    return Waiting(listed=b, task=draw(tasks_for(b)))


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(waiting_items(), max_size=3))
def test_any_home_stays_within_block_kit_limits(items: list[Waiting]) -> None:
    resolved = [(resolved_card(n, CardState.ANSWERED), None) for n in range(MAX_RESOLVED)]
    view = render_home(items, resolved, kandev_url=KANDEV_URL, now=NOW, stale=True)
    assert_valid_home(view, allowed_users=(ALICE,))


def test_permalinks_are_remembered() -> None:
    from kandev_slack.usecases.views.waiting import Permalinks

    asked: list[tuple[str, str]] = []

    def fetch(channel: str, ts: str, *, strict: bool = False) -> str | None:
        asked.append((channel, ts))
        return None if ts == "missing" else f"https://t.slack.com/archives/{channel}/p{ts}"

    class Slack:  # the gateway's permalink call, answered locally
        permalink = staticmethod(fetch)

    links = Permalinks(Slack(), max_entries=2)
    assert links.get("C1", "1") == "https://t.slack.com/archives/C1/p1"
    assert links.get("C1", "1") == "https://t.slack.com/archives/C1/p1"
    assert links.get("C1", "missing") is None
    assert links.get("C1", "missing") is None  # a failure is asked again next time
    links.get("C1", "2")
    links.get("C1", "3")  # evicts the least recently used ("1")
    links.get("C1", "1")
    assert asked == [
        ("C1", "1"),
        ("C1", "missing"),
        ("C1", "missing"),
        ("C1", "2"),
        ("C1", "3"),
        ("C1", "1"),
    ]
