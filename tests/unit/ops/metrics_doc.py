"""The metrics as docs/operations.md documents them and as ``/metrics`` serves them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

DOC = Path(__file__).resolve().parents[3] / "docs" / "operations.md"
_ROW = re.compile(r"^\| `(kandev_slack_[a-z_]+)` \| (counter|gauge|histogram) \| ([^|]*) \|")


@dataclass(frozen=True)
class Documented:
    type: str
    labels: frozenset[str]


def documented() -> dict[str, Documented]:
    """The documented metrics table: name (as exposed, counters with ``_total``) → type, labels."""
    rows: dict[str, Documented] = {}
    for line in DOC.read_text().splitlines():
        match = _ROW.match(line)
        if match:
            name, kind, labels = match.groups()
            rows[name] = Documented(kind, frozenset(re.findall(r"`([a-z_]+)`", labels)))
    return rows


@dataclass(frozen=True)
class Served:
    type: str
    labels: frozenset[str]  # label names seen in the samples (``le`` left out)
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float]


def served(text: str) -> dict[str, Served]:
    """What a scrape shows, by exposed name (counters as ``…_total``)."""
    families: dict[str, Served] = {}
    for family in text_string_to_metric_families(text):
        if not family.name.startswith("kandev_slack_"):
            continue
        name = family.name + ("_total" if family.type == "counter" else "")
        samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in family.samples}
        labels = frozenset(k for s in family.samples for k in s.labels if k != "le")
        families[name] = Served(family.type, labels, samples)
    return families


def scrape(url: str) -> dict[str, Served]:
    response = httpx.get(url, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return served(response.text)


def value(metrics: dict[str, Served], sample: str, **labels: str) -> float:
    """One sample's value (0 when it is not there yet)."""
    for family in metrics.values():
        found = family.samples.get((sample, tuple(sorted(labels.items()))))
        if found is not None:
            return found
    return 0.0


def compare(served_now: dict[str, Served]) -> list[str]:
    """Differences between the documented table and ``served_now`` (empty: they match)."""
    doc = documented()
    problems = []
    for name in sorted(set(doc) - set(served_now)):
        problems.append(f"{name}: documented, not served")
    for name in sorted(set(served_now) - set(doc)):
        problems.append(f"{name}: served, not documented")
    for name in sorted(set(doc) & set(served_now)):
        if doc[name].type != served_now[name].type:
            problems.append(f"{name}: documented {doc[name].type}, served {served_now[name].type}")
        seen = served_now[name].labels
        if seen and seen != doc[name].labels:
            problems.append(
                f"{name}: documented labels {sorted(doc[name].labels)}, served {sorted(seen)}"
            )
    return problems
