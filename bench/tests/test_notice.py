"""The noticing scenario's table: CPU per new item at each number waiting, and its target."""

from __future__ import annotations

from bench.report import Results, render, render_notice
from bench.scenarios.notice import CPU_RATIO_TARGET, Level, Notice
from bench.stats import Summary


def _level(waiting: int, cpu_ms: float) -> Level:
    return Level(
        waiting=waiting,
        new=10,
        window_s=10.0,
        idle_ms_per_s=12.0,
        cpu_ms_per_item=cpu_ms,
        requests_per_item=(0.0, 1.0, 1.0),
        floor=Summary.of_seconds([0.01, 0.02]),
        push=Summary.of_seconds([0.03, 0.04]),
        load="1.00 1.00 1.00",
    )


def test_the_cpu_per_new_item_at_the_largest_level_is_compared_with_the_smallest() -> None:
    met = Notice(levels=[_level(10, 30.0), _level(100, 31.0), _level(1000, 33.0)])
    assert met.cpu_ratio == 1.1
    text = render_notice(met)
    assert "| 1,000   | 10" in text
    assert f"with 1,000 waiting ≤ {CPU_RATIO_TARGET:g}× that with 10 | 1.10×    | yes" in text

    missed = Notice(levels=[_level(10, 20.0), _level(1000, 40.0)], problems=["lost one"])
    text = render_notice(missed)
    assert "| 2.00×    | **no** |" in text and "- lost one" in text
    assert Notice(levels=[_level(10, 20.0)]).cpu_ratio is None


def test_the_noticing_table_is_part_of_the_report() -> None:
    report = render(Results(notice=Notice(levels=[_level(10, 30.0)])), "preamble")
    assert "### 15. Noticing one new item" in report
