"""The run's summary: one row per target (target, measured, floor / limit, met), "not run" and
"failed" rows for scenarios without a result, and its block in docs/performance.md.
``pytest bench``; no Kandev."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.kandev import Asked, DirectBundles, Slot, WaitingPool
from bench.report import (
    SOURCES,
    Results,
    render,
    render_summary_table,
    summary_rows,
)
from bench.scenarios.answering import Answering
from bench.scenarios.approvals import ApprovalBench
from bench.scenarios.footprint import Footprint, Measured
from bench.scenarios.queues import Queues
from bench.stats import Summary
from bench.summary import END, START, MarkersError, Row, block, replace_block, write_docs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "performance.md"


def _ms(*values: float) -> Summary:
    summary = Summary.of_seconds([v / 1000 for v in values])
    assert summary is not None
    return summary


def _by_target(res: Results) -> dict[str, Row]:
    return {r.target: r for r in summary_rows(res)}


def test_every_scenario_not_run_lists_its_targets_as_not_run() -> None:
    rows = summary_rows(Results())
    assert rows and all(r.measured == "not run" and r.met_cell == "–" for r in rows)
    targets = [r.target for r in rows]
    for wanted in (  # issue 35's table, each a row even when nothing ran
        "ack p99 ≤ 50 ms: button click, identical questions (groups)",
        "ack p99 ≤ 50 ms: modal submission, identical questions (groups)",
        "ack p99 ≤ 50 ms: slash command",
        "ack p99 ≤ 50 ms: message shortcut",
        "ack p99 ≤ 50 ms: App Home action",
        "time to card p95 ≤ floor p95 + 50 ms (push) with 1,000 waiting",
        "ack p99 ≤ 50 ms: slash command with 1,000 waiting",
        "crowd of 50 in 1 s, HTTP (waitress), bot on a CPU of its own: ack p99 ≤ 100 ms",
        "crowd of 50 in 1 s, Socket Mode, all on 2 shared CPUs: ack p99 ≤ 100 ms",
        "crowd of 50 in 1 s, HTTP (waitress), bot on a CPU of its own: "
        "click → agent p95 ≤ Kandev's own p95 × 1.10",
        "crowd of 50 in 1 s, Socket Mode, all on 2 shared CPUs: "
        "click → agent p95 ≤ Kandev's own p95 × 1.25",
        "RSS ≤ 100 MB with 100,000 cards and 1,000 waiting: SQLite",
        "RSS ≤ 100 MB with 100,000 cards and 1,000 waiting: PostgreSQL",
    ):
        assert wanted in targets
    assert any(t.startswith("approvals") for t in targets)
    assert any("CPU per new item" in t for t in targets)  # issue 35 point 2's hook
    assert len(targets) == len(set(targets))


def test_a_failed_scenario_s_targets_are_failed_and_not_met() -> None:
    res = Results(failures={"queues": "TimeoutError: no card"})
    rows = [r for r in summary_rows(res) if r.measured != "not run"]
    assert len(rows) == 4 and all(r.cells()[1:] == ["failed", "", "**no**"] for r in rows)
    assert rows[0].target == "time to card p95 ≤ floor p95 + 50 ms (push) with 1,000 waiting"
    assert "**4 of 4 targets not met.**" in render_summary_table(res)


def test_measured_rows_stand_beside_their_floor_or_limit() -> None:
    answers = Answering(
        clicks=2,
        rests=0,
        modals=2,
        respond_agent=_ms(10, 20),
        click_agent=_ms(30, 40),
        ack_button=_ms(20, 74),  # issue 35: 74 ms with groups
        ack_modal=_ms(5, 9),
        home_note="n/a (no App Home with a question)",
    )
    rows = _by_target(Results(answers=answers))
    button = rows["ack p99 ≤ 50 ms: button click, identical questions (groups)"]
    assert button.cells()[1:] == ["73", "50 ms", "**no**"]
    assert rows["ack p99 ≤ 50 ms: modal submission, identical questions (groups)"].met is True
    home = rows["ack p99 ≤ 50 ms: App Home action"]
    assert (home.measured, home.met_cell) == ("n/a (no App Home with a question)", "–")
    click = rows["click → agent p95 ≤ Kandev respond → agent p95 + 150 ms"]
    assert click.cells()[1:] == ["40 ms", "170 ms (Kandev's own 20 + 150)", "yes"]
    # the other scenarios did not run: their rows say so, after the measured ones
    assert rows["time to card p95 ≤ floor p95 + 50 ms (push)"].measured == "not run"


def test_rows_added_the_old_way_split_measured_from_their_limit() -> None:
    """Sources that add ``(target, "measured ≤ limit", met)`` (the approvals' rows) get a floor
    column all the same."""
    approvals = ApprovalBench(
        count=2,
        floor_card=_ms(40, 50),
        bot_card=_ms(60, 120),
        click_agent=_ms(20, 25),
        resolve_agent=_ms(10, 12),
    )
    rows = _by_target(Results(approvals=approvals))
    card = rows["request → approval card p95 ≤ floor p95 + 50 ms"]
    # To a tenth: rounded to a whole ms, a miss by less than 1 ms read "91 | 91 | no".
    assert card.cells()[1:] == ["117.0", "99.5", "**no**"]
    assert card.value == "117.0 ≤ 99.5"  # as the scenario wrote it (targets() keeps it)


def _measured(backend: str, cards: int, peak: float) -> Measured:
    return Measured(backend, cards, peak - 8, peak, peak - 3, 4.0, 0.4, 8.0)


def test_the_memory_rows_say_the_sizes_measured_and_a_smaller_run_meets_nothing() -> None:
    small = Footprint(1.0, 6.0, 1000)
    small.runs = [_measured("sqlite", 0, 60), _measured("sqlite", 20_000, 90)]
    rows = [r for r in summary_rows(Results(footprint=small)) if r.target.startswith("RSS")]
    assert [r.cells() for r in rows] == [
        [
            "RSS ≤ 100 MB with 20,000 cards and 1,000 waiting: SQLite",
            "peak 90 MB (idle 82); the target's size: 100,000 + 1,000",
            "100 MB",
            "–",
        ],
        ["RSS ≤ 100 MB with 100,000 cards and 1,000 waiting: PostgreSQL", "not run", "", "–"],
    ]
    over = Footprint(1.0, 6.0, 100)
    over.runs = [_measured("postgresql", 10_000, 101)]
    [row] = [
        r
        for r in summary_rows(Results(footprint=over))
        if r.target.startswith("RSS") and "PostgreSQL" in r.target
    ]
    assert row.met is False  # over the limit already at a smaller size


def test_the_1000_waiting_rows_come_from_the_queues() -> None:
    queues = Queues(
        waiting=1000,
        fresh=3,
        spacing_s=0.6,
        window_s=15.0,
        poll_interval_s=5.0,
        floor=_ms(60, 66),
        push=_ms(70, 125),
        poll=_ms(1000, 4000),
        missing={"push": 0, "poll": 0},
        ack_slash=_ms(10, 102),
    )
    rows = _by_target(Results(queues=queues))
    push = rows["time to card p95 ≤ floor p95 + 50 ms (push) with 1,000 waiting"]
    assert push.cells()[1:] == ["122 ms", "116 ms (floor 66 + 50)", "**no**"]
    slash = rows["ack p99 ≤ 50 ms: slash command with 1,000 waiting"]
    assert slash.cells()[1:] == ["101", "50 ms", "**no**"]


def test_the_summary_is_the_last_table_of_the_results() -> None:
    res = Results(answers=Answering(clicks=0, rests=0, modals=0))
    text = render(res, "## run")
    assert text.rstrip().splitlines()[-1].endswith("not met.**")
    last_heading = [line for line in text.splitlines() if line.startswith("### ")][-1]
    assert last_heading == "### Summary: every target"
    assert "| target" in text and "| floor / limit |" in text


def test_the_docs_block_is_replaced_in_place_and_again_the_same() -> None:
    doc = f"# Performance\n\nProse before.\n\n{START}\nold table\n{END}\n\nProse after.\n"
    new = block("| target |\n|---|", "`python -m bench` — today")
    once = replace_block(doc, new)
    assert once == replace_block(once, new)
    assert "old table" not in once
    assert once.startswith("# Performance\n\nProse before.\n\n" + START)
    assert once.endswith(f"{END}\n\nProse after.\n")
    assert "`python -m bench` — today" in once


def test_a_document_without_markers_gets_the_block_appended() -> None:
    new = block("| t |", "about")
    text = replace_block("# Performance\n\nProse.\n", new)
    assert text.startswith("# Performance\n\nProse.\n\n## Latest benchmark run\n\n" + START)
    assert replace_block(text, new) == text  # then replaced in place


@pytest.mark.parametrize(
    "broken",
    [
        f"{START}\nno end",
        f"no start\n{END}",
        f"{END}\nreversed\n{START}\n",
        f"{START}\none\n{END}\n{START}\ntwo\n{END}\n",
    ],
)
def test_broken_markers_are_a_clear_error(broken: str) -> None:
    with pytest.raises(MarkersError, match="bench:summary"):
        replace_block(broken, block("| t |", "about"))


def test_write_docs_leaves_an_unchanged_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "performance.md"
    path.write_text(f"x\n{START}\nold\n{END}\n")
    new = block(render_summary_table(Results()), "about")
    write_docs(path, new)
    assert path.read_text() == f"x\n{new}\n"


def test_the_performance_document_has_one_summary_block() -> None:
    text = DOCS.read_text()
    assert text.count(START) == 1 and text.count(END) == 1
    assert replace_block(text, block("| t |", "about")).count("| t |") == 1


def test_each_source_is_a_scenario_of_the_results() -> None:
    fields = set(Results.__dataclass_fields__)
    # "notice" is issue 35 point 2's hook: its scenario adds Results.notice
    assert {s.scenario for s in SOURCES} - fields <= {"notice"}


class _Bundles(DirectBundles):
    """Kandev's side of the pool without Kandev: slots and bundles by number."""

    def __init__(self) -> None:
        self.workers = 1
        self.made = 0

    def prepare(self, workspace_ids, count, *, first=0):
        self.made += count
        return [Slot(f"t{first + n}", f"s{first + n}", "ws", f"t{first + n}") for n in range(count)]

    def ask(self, slot, questions=None, context=""):
        return Asked(f"p{slot.task_id[1:]}", slot.task_id, slot.workspace_id, 0.0)


def test_the_waiting_pool_grows_and_is_shared() -> None:
    bundles = _Bundles()
    pool = WaitingPool(bundles, ["ws"])
    pool.prepare(30)  # the footprint's sessions, made while it measures the empty stores
    assert len(pool.slots) == 30 and pool.asked == []
    first = pool.ask(30)
    assert [a.pending_id for a in first] == [f"p{n}" for n in range(30)]
    again = pool.ask(10)  # the queues after it: the same 30, nothing made
    assert again == first and bundles.made == 30
    more = pool.ask(45)
    assert len(more) == 45 and more[:30] == first
    pool.forget(["p3", "p40"])
    assert len(pool.asked) == 43 and pool.slot_of("p41").task_id == "t41"
    assert len(pool.ask(43)) == 43
