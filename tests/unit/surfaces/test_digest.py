"""The digest as it is shown (kandev_slack/surfaces/digest.py): grouped by workspace, most
urgent first as given, each item with its age, its card's link and an "Answer…" button that
names it; at most MAX_DIGEST_ITEMS shown and the rest counted; within Slack's limits and
unable to notify anyone whatever the titles (property), with 1,000 items too; and the words
of ``/kandev-questions digest …``."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.ids import parse_button_value
from kandev_slack.cards.limits import MAX_MESSAGE_BLOCKS
from kandev_slack.core.domain import TaskInfo
from kandev_slack.surfaces.digest import DigestView, answer_text, render_digest
from kandev_slack.surfaces.waiting import Waiting
from kandev_slack.usecases.followups.digests import MAX_DIGEST_ITEMS, DigestAnswer
from tests.kit.factories import KANDEV_URL, NOW, make_bundle, make_question
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.safety import assert_cannot_notify, assert_text_cannot_notify
from tests.unit.cards.strategies import mention_texts
from tests.unit.cards.test_limits_property import SETTINGS

PERMALINK = "https://example.slack.com/archives/C0QUESTION/p1700000000000100"


def item(n: int, *, title: str = "", workspace: str = "Platform", priority: str = "") -> Waiting:
    bundle = make_bundle(
        make_question(1),
        pending_id=f"p-{n}",
        task_id=f"t-{n}",
        created_at=NOW - timedelta(hours=n % 50),
    )
    task = TaskInfo(
        task_id=f"t-{n}",
        title=title or f"Task {n}",
        workspace_id=f"ws-{workspace}",
        workspace_name=workspace,
        priority=priority,
    )
    return Waiting(bundle=bundle, task=task, permalink=PERMALINK)


def view(items: list[Waiting], total: int | None = None) -> DigestView:
    return DigestView(
        "person", tuple(items), len(items) if total is None else total, NOW, KANDEV_URL
    )


def _texts(message: dict) -> list[str]:
    return [b["text"]["text"] for b in message["blocks"] if b.get("type") == "section"] + [
        e["text"] for b in message["blocks"] if b.get("type") == "context" for e in b["elements"]
    ]


def test_items_are_grouped_by_workspace_with_age_link_and_answer() -> None:
    items = [
        item(1, workspace="Mobile", priority="critical"),
        item(2, workspace="Platform", priority="high"),
        item(3, workspace="Mobile"),
    ]
    message = render_digest(view(items))
    assert_valid_message(message)
    texts = _texts(message)
    assert "3 questions wait for you" in texts[0]
    sections = [b for b in message["blocks"] if b.get("block_id", "").startswith("kq_digest:")]
    assert len(sections) == 3
    # grouped: Mobile's two (critical first, as given), then Platform's
    order = [parse_button_value(b["accessory"]["value"]).pending_id for b in sections]
    assert order == ["p-1", "p-3", "p-2"]
    assert all(b["accessory"]["action_id"] == ids.ACTION_ANSWER_MODAL for b in sections)
    first = sections[0]["text"]["text"]
    assert first.startswith("🔴 ") and "View card" in first and "waiting 1 h" in first
    assert any("Workspace *Mobile* · 2" in t for t in texts)


def test_a_thousand_items_show_the_first_and_count_the_rest() -> None:
    items = [item(n, workspace=f"W{n % 30}", title="x" * 2000) for n in range(1000)]
    message = render_digest(view(items[:MAX_DIGEST_ITEMS], total=1000))
    assert_valid_message(message)
    assert len(message["blocks"]) <= MAX_MESSAGE_BLOCKS
    assert f"… and {1000 - MAX_DIGEST_ITEMS} more" in _texts(message)[-1]
    assert "/kandev-questions" in _texts(message)[-1]


@SETTINGS
@given(
    titles=st.lists(mention_texts(3000), min_size=1, max_size=MAX_DIGEST_ITEMS + 5),
    workspaces=st.lists(mention_texts(300), min_size=1, max_size=25),
    extra=st.integers(0, 5000),
)
def test_any_digest_stays_within_limits_and_cannot_notify(
    titles: list[str], workspaces: list[str], extra: int
) -> None:
    items = [
        item(n, title=title, workspace=workspaces[n % len(workspaces)] or "w")
        for n, title in enumerate(titles)
    ]
    message = render_digest(view(items, total=len(items) + extra))
    assert_valid_message(message)
    assert_cannot_notify(message)
    assert len(message["blocks"]) <= MAX_MESSAGE_BLOCKS


def test_the_command_words() -> None:
    assert "HH:MM" in answer_text(DigestAnswer("bad", typed="25:00"))
    assert "Nothing was changed" in answer_text(DigestAnswer("bad", typed="tomorrow"))
    assert answer_text(DigestAnswer("nothing")) == "Nothing is waiting for you."
    assert "off" in answer_text(DigestAnswer("off"))
    assert "no digest" in answer_text(DigestAnswer("not_set"))
    shown = answer_text(DigestAnswer("setting", at="09:00", tz="Europe/Berlin"))
    assert "09:00" in shown and "Europe/Berlin" in shown
    said = answer_text(DigestAnswer("set", at="09:00", tz="Europe/Berlin", next_at=NOW))
    assert "09:00" in said and "<!date^" in said
    assert "2 questions" in answer_text(DigestAnswer("sent", count=2))
    for kind in ("bad", "nothing", "off", "not_set", "unavailable"):
        assert_text_cannot_notify(answer_text(DigestAnswer(kind, typed="<!channel> @here")))  # type: ignore[arg-type]
