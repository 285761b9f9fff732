"""Order statistics of a sample of latencies (seconds in, milliseconds out)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100), linear between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of an empty sample")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class Summary:
    """A sample of durations in milliseconds."""

    count: int
    median: float
    p95: float
    p99: float
    max: float

    @classmethod
    def of_seconds(cls, seconds: Sequence[float]) -> Summary | None:
        if not seconds:
            return None
        ms = [s * 1000.0 for s in seconds]
        return cls(len(ms), percentile(ms, 50), percentile(ms, 95), percentile(ms, 99), max(ms))


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return a / b
