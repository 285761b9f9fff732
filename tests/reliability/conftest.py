"""Reliability tests: inject one fault, assert nothing was lost or duplicated, record it.

Fixtures
- ``reliability``: ``reliability.record(fault=..., survived=..., lost=..., duplicates=...,
  guarantee=N)`` (see recorder.py). Optional marker ``@pytest.mark.fault("name", guarantee=N)``
  names the fault of a test that fails before it records anything.

At the end of the run ``pytest_terminal_summary`` prints a "Reliability summary" table.
"""

from __future__ import annotations

import pytest

from tests.reliability.recorder import Reliability, ReliabilityLog, fault_marker

_LOG = pytest.StashKey[ReliabilityLog]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fault(name, guarantee=None): the fault a reliability test injects"
    )
    config.stash[_LOG] = ReliabilityLog()


def _log(config: pytest.Config) -> ReliabilityLog:
    log = config.stash.get(_LOG, None)
    if log is None:
        log = config.stash[_LOG] = ReliabilityLog()
    return log


@pytest.fixture
def reliability(request: pytest.FixtureRequest) -> Reliability:
    return Reliability(_log(request.config), request.node)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.failed and "reliability" in getattr(item, "fixturenames", ()):
        fault, guarantee = fault_marker(item)
        why = f"test failed in {report.when}"
        _log(item.config).mark_failed(item.nodeid, fault, guarantee, why)
    return report


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    lines = _log(config).summary_lines()
    if not lines:
        return
    terminalreporter.section("Reliability summary")
    for line in lines:
        terminalreporter.write_line(line)
