"""The footprint scenario's parts that need no bot: the bulk-written history reads back through
the store as the bot's own rows do, and the report's footprint table, targets and query plans.
``pytest bench``; no timing assertions."""

from __future__ import annotations

from pathlib import Path

from bench.report import Results, render, targets
from bench.scenarios.footprint import Footprint, Measured, Waiting, fill, query_plans, sizes
from bench.world import Route
from kandev_slack.core.domain import CardState
from kandev_slack.store import Database

ROUTES = [Route(f"ws-{n}", f"bench-{n:02d}", f"C0BENCH{n:02d}") for n in range(1, 4)]


def test_sizes_are_empty_a_tenth_and_all() -> None:
    assert sizes(100_000) == [0, 10_000, 100_000]
    assert sizes(5) == [0, 5]


def test_the_history_reads_back_through_the_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    Database(url).close()
    waiting = [
        Waiting(f"p-wait-{n}", f"t-wait-{n}", ROUTES[n], f"17000000{n}.000100") for n in range(2)
    ]
    fill(url, ROUTES, start=0, count=40, waiting=waiting)
    fill(url, ROUTES, start=40, count=60)
    with Database(url) as store:
        assert store.cards.count() == 102
        assert store.cards.count(CardState.PENDING) == 2
        assert {c.pending_id for c in store.followups.waiting_posted() for c in [c.card]} == {
            "p-wait-0",
            "p-wait-1",
        }
        assert store.followups.unnotified_posted() == []  # their DM cards were decided
        resolved = store.cards.many([r.pending_id for r in store.cards.recent_resolved(100)])
        assert len(resolved) == 100
        assert all(c.outcome is not None and c.outcome.at.tzinfo for c in resolved)
        assert all(c.ts for c in resolved)
        answered = [c for c in resolved if c.state is CardState.ANSWERED]
        assert answered and all(c.bundle.pending_id == c.pending_id for c in answered)
        slack = [c for c in answered if c.outcome and c.outcome.via == "slack"]
        assert store.submissions.won_submission(slack[0].pending_id) is not None
        assert len(store.audit_log.audit_entries(slack[0].pending_id)) == 2
        assert store.retention.purge().cards == 0  # all within the retention period
        assert store.stats().outbox_pending == 0
        # the history is spread over the retention period, newest within the week
        ages = sorted(c.outcome.at for c in resolved if c.outcome)
        assert (ages[-1] - ages[0]).days >= 60


def test_query_plans_of_a_filled_store_flag_no_scan(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    Database(url).close()
    fill(url, ROUTES, start=0, count=50)
    found = query_plans(url, tmp_path)
    assert {p.query for p in found} >= {"pending", "purge", "outbox_take", "recent_resolved"}
    assert [p for p in found if p.scans] == []


def _measured(backend: str, cards: int, peak: float) -> Measured:
    return Measured(backend, cards, peak - 5, peak, peak - 3, 4.0, 0.4, 8.0)


def test_the_footprint_target_is_per_store_with_the_most_cards(tmp_path: Path) -> None:
    f = Footprint(1.0, 8.0, 1000)
    f.runs = [
        _measured("sqlite", 0, 70),
        _measured("sqlite", 100_000, 90),
        _measured("postgresql", 100_000, 104),
    ]
    rows = {r[0]: r[1:] for r in targets(Results(footprint=f)) if r[0].startswith("RSS")}
    assert rows == {
        "RSS ≤ 100 MB with 100,000 cards and 1,000 waiting: SQLite": [
            "peak 90 MB (idle 85)",
            "yes",
        ],
        "RSS ≤ 100 MB with 100,000 cards and 1,000 waiting: PostgreSQL": [
            "peak 104 MB (idle 99)",
            "**no**",
        ],
    }
    url = f"sqlite:///{tmp_path / 'h.db'}"
    Database(url).close()
    fill(url, ROUTES, start=0, count=10)
    f.plans = {"sqlite": query_plans(url, tmp_path)}
    f.plan_cards = 10
    text = render(Results(footprint=f), "preamble")
    assert "| PostgreSQL | 100,000 | 99     | 104" in text
    assert "### Query plans (10 cards" in text
    assert "**outbox_take** (publisher tick (every second))" in text
    assert "No hot query reads a large table whole." in text
