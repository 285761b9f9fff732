"""The "Reliability summary" as a pytest plugin (registered in tests/conftest.py, so the process
that prints the run's summary has it even when it collects nothing itself: pytest-xdist's
controller).

Each reliability test's records (recorder.py) travel on its teardown report (``user_properties``,
which pytest-xdist sends from the worker that ran the test to the controller); the summary is made
from the reports, so it is the same with or without ``-n``.
"""

from __future__ import annotations

from dataclasses import asdict

import pytest

from tests.e2e.reliability.recorder import FaultRecord, ReliabilityLog, fault_marker

_KEY = "reliability"
_LOG = pytest.StashKey[ReliabilityLog]()  # what this process's tests recorded
# What the reports brought (the summary). pytest_runtest_logreport is given no config, and a
# process runs one pytest session, so it is the module's.
_REPORTS = ReliabilityLog()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fault(name, guarantee=None): the fault a reliability test injects"
    )
    config.stash[_LOG] = ReliabilityLog()
    _REPORTS.records.clear()


def recorded(config: pytest.Config) -> ReliabilityLog:
    """The records of the tests this process runs (the ``reliability`` fixture adds to it)."""
    return config.stash[_LOG]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if "reliability" not in getattr(item, "fixturenames", ()):
        return report
    log = recorded(item.config)
    if report.failed:
        fault, guarantee = fault_marker(item)
        log.mark_failed(item.nodeid, fault, guarantee, f"test failed in {report.when}")
    if report.when == "teardown":
        report.user_properties.append((_KEY, [asdict(r) for r in log.for_test(item.nodeid)]))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "teardown":
        return
    for key, value in report.user_properties:
        if key == _KEY:
            for record in value:
                _REPORTS.add(FaultRecord(**record))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    lines = _REPORTS.summary_lines()
    if not lines:
        return
    terminalreporter.section("Reliability summary")
    for line in lines:
        terminalreporter.write_line(line)
