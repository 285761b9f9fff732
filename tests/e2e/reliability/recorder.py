"""The reliability record: which faults the suite injected and whether the bot survived them.

Each fault test asks for the ``reliability`` fixture and records what it observed::

    reliability.record(
        fault="kandev down mid-run", guarantee=2, survived=True, lost=0, duplicates=0
    )

``survived`` is the test's own verdict (usually ``lost == 0 and duplicates == 0`` plus whatever
else it checks); a test that fails afterwards is counted as not survived whatever it recorded,
and a failing test that recorded nothing still appears (as its ``fault`` marker or test name).
summary.py prints the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest


@dataclass(frozen=True)
class FaultRecord:
    """One injected fault and what happened to the answers and cards around it."""

    fault: str
    survived: bool
    lost: int = 0
    duplicates: int = 0
    guarantee: int | None = None
    test: str = ""
    detail: str = ""


@dataclass
class ReliabilityLog:
    """Every record of the session, in the order they were made."""

    records: list[FaultRecord] = field(default_factory=list)

    def add(self, record: FaultRecord) -> FaultRecord:
        self.records.append(record)
        return record

    def for_test(self, nodeid: str) -> list[FaultRecord]:
        return [r for r in self.records if r.test == nodeid]

    def mark_failed(self, nodeid: str, fault: str, guarantee: int | None, why: str) -> None:
        """The test failed: its records did not survive; record one if it made none."""
        mine = self.for_test(nodeid)
        if not mine:
            self.add(FaultRecord(fault, False, guarantee=guarantee, test=nodeid, detail=why))
            return
        self.records = [
            replace(r, survived=False, detail=r.detail or why) if r.test == nodeid else r
            for r in self.records
        ]

    # ---- the summary ---------------------------------------------------------------------

    def summary_lines(self) -> list[str]:
        if not self.records:
            return []
        width = max(len("fault"), *(len(r.fault) for r in self.records))
        header = f"{'G':>2}  {'fault':<{width}}  {'survived':<8}  {'lost':>4}  {'dup':>4}"
        lines = [header, "-" * len(header)]
        for r in sorted(self.records, key=lambda r: (r.guarantee or 99, r.fault)):
            g = "" if r.guarantee is None else str(r.guarantee)
            ok = "yes" if r.survived else "NO"
            lines.append(f"{g:>2}  {r.fault:<{width}}  {ok:<8}  {r.lost:>4}  {r.duplicates:>4}")
        survived = sum(r.survived for r in self.records)
        lines.append("-" * len(header))
        lines.append(
            f"faults injected: {len(self.records)}, survived: {survived}, "
            f"answers lost: {sum(r.lost for r in self.records)}, "
            f"duplicates: {sum(r.duplicates for r in self.records)}"
        )
        return lines


class Reliability:
    """The per-test handle behind the ``reliability`` fixture."""

    def __init__(self, log: ReliabilityLog, item: pytest.Item) -> None:
        self._log = log
        self._item = item

    def record(
        self,
        fault: str,
        *,
        survived: bool,
        lost: int = 0,
        duplicates: int = 0,
        guarantee: int | None = None,
        detail: str = "",
    ) -> FaultRecord:
        """Record one injected fault and its result (call once per fault the test injects)."""
        if guarantee is None:
            guarantee = fault_marker(self._item)[1]
        return self._log.add(
            FaultRecord(
                fault=fault,
                survived=survived and lost == 0 and duplicates == 0,
                lost=lost,
                duplicates=duplicates,
                guarantee=guarantee,
                test=self._item.nodeid,
                detail=detail,
            )
        )


def fault_marker(item: pytest.Item) -> tuple[str, int | None]:
    """``@pytest.mark.fault("name", guarantee=N)`` of a test, else (its name, None)."""
    marker = item.get_closest_marker("fault")
    if marker is None:
        return item.name, None
    name = str(marker.args[0]) if marker.args else item.name
    guarantee = marker.kwargs.get("guarantee")
    return name, int(guarantee) if guarantee is not None else None
