"""The reliability record itself: totals, failure marking, the printed table."""

from __future__ import annotations

from tests.e2e.reliability.recorder import FaultRecord, ReliabilityLog


def test_summary_counts_faults_survivors_losses_and_duplicates() -> None:
    log = ReliabilityLog()
    log.add(FaultRecord("kandev down mid-run", True, guarantee=2, test="t1"))
    log.add(FaultRecord("sigkill mid-post", False, lost=1, duplicates=2, guarantee=4, test="t2"))
    lines = log.summary_lines()
    assert lines[-1] == "faults injected: 2, survived: 1, answers lost: 1, duplicates: 2"
    assert any("kandev down mid-run" in line and "yes" in line for line in lines)
    assert any("sigkill mid-post" in line and "NO" in line for line in lines)


def test_a_failed_test_does_not_survive_even_if_it_recorded_success() -> None:
    log = ReliabilityLog()
    log.add(FaultRecord("double click", True, test="t1"))
    log.mark_failed("t1", "double click", 1, "test failed in call")
    log.mark_failed("t2", "replica killed", 5, "test failed in call")
    assert [(r.fault, r.survived) for r in log.records] == [
        ("double click", False),
        ("replica killed", False),
    ]


def test_no_records_print_nothing() -> None:
    assert ReliabilityLog().summary_lines() == []
