"""The digest as it is shown (kandev_slack/surfaces/digest.py): grouped by workspace, most
urgent first as given, each item with its age, its card's link and an "Answer…" button that
names it; at most MAX_DIGEST_ITEMS shown and the rest counted; within Slack's limits and
unable to notify anyone whatever the titles (property), with 1,000 items too; and the words
of ``/kandev-questions digest …``."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.ids import parse_button_value
from kandev_slack.cards.limits import MAX_MESSAGE_BLOCKS
from kandev_slack.cards.text import one_line
from kandev_slack.core.domain import TaskInfo
from kandev_slack.surfaces.digest import DigestView, answer_text, render_digest
from kandev_slack.surfaces.waiting import Waiting
from kandev_slack.usecases.followups.digests import MAX_DIGEST_ITEMS, DigestAnswer
from kandev_slack.usecases.views.waiting import MAX_ROW
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
    return Waiting(listed=bundle, task=task, permalink=PERMALINK)


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


# ---- identical items as one row (issue 33) ------------------------------------------------------


def link(n: int) -> str:
    return f"https://example.slack.com/archives/C0QUESTION/p17000000000{n:05d}"


def group(
    first: int, size: int, *, priorities: dict[int, str] | None = None, questions: int = 1
) -> Waiting:
    """``size`` identical items (numbered from ``first``) as one row led by the first, each
    asked ``n`` hours ago (``n % 50``), the first linked to its card, the others not."""
    members = []
    for n in range(first, first + size):
        base = item(n, priority=(priorities or {}).get(n, ""))
        bundle = make_bundle(
            *[make_question(q) for q in range(1, questions + 1)],
            pending_id=base.pending_id,
            task_id=base.bundle.task_id,
            created_at=base.bundle.created_at,
        )
        members.append(replace(base, listed=bundle, permalink=link(n) if n == first else None))
    return replace(members[0], others=tuple(members[1:]))


def rows_of(message: dict) -> list[dict]:
    return [b for b in message["blocks"] if b.get("block_id", "").startswith("kq_digest:")]


def test_a_group_is_one_row_critical_aged_by_its_oldest_linking_its_first_card() -> None:
    row = group(1, 3, priorities={3: "critical"})  # asked 1 h, 2 h and 3 h ago
    alone = item(7, workspace="Platform")
    several = group(10, 2, questions=2)
    message = render_digest(view([row, alone, several], total=6))
    assert_valid_message(message)
    texts = _texts(message)
    assert "6 questions wait for you" in texts[0]
    assert any("Workspace *Platform* · 6" in t for t in texts)
    shown = rows_of(message)
    assert len(shown) == 3  # a row each: 3 agents, the item alone, 2 agents
    first = shown[0]["text"]["text"]
    assert first.startswith("🔴 ") and "*3 agents*" in first
    assert "waiting 3 h" in first  # the oldest
    assert first.count("View card") == 1 and link(1) in first
    assert [b["accessory"]["text"]["text"] for b in shown] == [
        "Answer for all…",
        "Answer…",
        "Answer…",  # several questions: answered card by card
    ]
    assert [parse_button_value(b["accessory"]["value"]).pending_id for b in shown] == [
        "p-1",
        "p-7",
        "p-10",
    ]
    assert "agents" not in shown[1]["text"]["text"]
    assert "(3 agents)" in message["text"]
    assert "`/kandev-questions` lists them with filters" in texts[-1]  # nothing more waits


def test_a_thousand_items_in_groups_show_the_first_rows_and_count_the_rest() -> None:
    rows = [group(n * MAX_ROW, MAX_ROW) for n in range(1000 // MAX_ROW)]
    message = render_digest(view(rows[:MAX_DIGEST_ITEMS], total=1000))
    assert_valid_message(message)
    assert len(message["blocks"]) <= MAX_MESSAGE_BLOCKS
    assert len(rows_of(message)) == MAX_DIGEST_ITEMS
    rest = 1000 - MAX_DIGEST_ITEMS * MAX_ROW
    assert f"… and {rest} more — `/kandev-questions` lists them all" in _texts(message)[-1]


@st.composite
def digest_rows_drawn(draw) -> list[Waiting]:
    """Up to MAX_DIGEST_ITEMS + 5 rows, each one item or a group of up to MAX_ROW, with titles
    and workspaces agents could write and any priorities."""
    sizes = draw(st.lists(st.integers(1, MAX_ROW), min_size=1, max_size=MAX_DIGEST_ITEMS + 5))
    rows, n = [], 0
    for size in sizes:
        workspace = draw(mention_texts(300)) or "w"  # identical items share their workspace
        members = []
        for _ in range(size):
            title = draw(mention_texts(3000))
            priority = draw(st.sampled_from(["", "critical", "high", "low"]))
            member = item(n, title=title, workspace=workspace, priority=priority)
            members.append(replace(member, permalink=None))
            n += 1
        lead = replace(members[0], permalink=draw(st.sampled_from([PERMALINK, None])))
        rows.append(replace(lead, others=tuple(members[1:])))
    return rows


@SETTINGS
@given(rows=digest_rows_drawn(), extra=st.integers(0, 5000))
def test_any_digest_of_rows_stays_within_limits_counts_items_and_cannot_notify(
    rows: list[Waiting], extra: int
) -> None:
    total = sum(row.count for row in rows) + extra
    message = render_digest(view(rows, total=total))
    assert_valid_message(message)
    assert_cannot_notify(message)
    assert len(message["blocks"]) <= MAX_MESSAGE_BLOCKS
    shown = rows[:MAX_DIGEST_ITEMS]
    blocks, in_order = rows_of(message), _by_workspace(shown)
    # A block a row, its button naming the row's first item (a group: its first card).
    assert [parse_button_value(b["accessory"]["value"]).pending_id for b in blocks] == [
        row.pending_id for row in in_order
    ]
    for block, row in zip(blocks, in_order, strict=True):
        text = block["text"]["text"]
        assert (f"*{row.count} agents*" in text) == bool(row.others)
        critical = any(m.task.priority == "critical" for m in row.members)
        assert text.startswith("🔴 ") == critical
    rest = total - sum(row.count for row in shown)
    footer = _texts(message)[-1]
    assert (f"… and {rest} more" in footer) if rest else ("lists them with filters" in footer)


def _by_workspace(rows: list[Waiting]) -> list[Waiting]:
    """``rows`` in the digest's order: by workspace (first seen first), as given within."""
    order: dict[str, list[Waiting]] = {}
    for row in rows:
        name = one_line(row.task.workspace_name) or row.task.workspace_id or "—"
        order.setdefault(name, []).append(row)
    return [row for members in order.values() for row in members]


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
