"""Several processes (like bot replicas) sharing one database race on every operation."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from typing import Any

from kandev_slack.store import SCHEMA_VERSION, Database
from tests.integration.store import procs

REPLICAS = 2
THREADS_PER_REPLICA = 3
PENDING_IDS = [f"p{n}" for n in range(150)]
OUTBOX_ITEMS = 40


def test_replicas_claim_transition_and_lease_exclusively(db_url: str) -> None:
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter, no inherited connections
    barrier = ctx.Barrier(REPLICAS + 1)
    results = ctx.Queue()
    workers = [
        ctx.Process(
            target=procs.replica,
            args=(db_url, f"r{n}", PENDING_IDS, THREADS_PER_REPLICA, barrier, results),
        )
        for n in range(REPLICAS)
    ]
    for worker in workers:
        worker.start()
    store: Database | None = None
    try:
        barrier.wait(procs.BARRIER_TIMEOUT_S)  # go: the replicas create the schema at once
        barrier.wait(procs.BARRIER_TIMEOUT_S)  # the replicas are open
        store = Database(db_url)
        outbox_ids = {
            store.outbox.outbox_put("post", f"k{n}", {"n": n}) for n in range(OUTBOX_ITEMS)
        }
        for _ in range(procs.PHASES - 2):
            barrier.wait(procs.BARRIER_TIMEOUT_S)
        reports: dict[str, dict[str, Any]] = dict(
            results.get(timeout=procs.BARRIER_TIMEOUT_S) for _ in workers
        )
    finally:
        for worker in workers:
            worker.join(timeout=30)
            if worker.is_alive():
                worker.kill()

    assert all("error" not in r for r in reports.values()), reports
    assert [w.exitcode for w in workers] == [0] * REPLICAS

    claims = Counter(p for r in reports.values() for p in r["claimed"])
    assert claims == Counter(PENDING_IDS), "every bundle claimed by exactly one replica"
    transitions = Counter(p for r in reports.values() for p in r["transitioned"])
    assert transitions == Counter(PENDING_IDS), "every card resolved by exactly one replica"
    leases = Counter(i for r in reports.values() for i in r["taken"])
    assert set(leases) == outbox_ids and set(leases.values()) == {1}, "each item leased once"

    assert store is not None
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.cards.count() == len(PENDING_IDS)
        assert store.cards.pending() == []
        for pending_id in PENDING_IDS:
            card = store.cards.get(pending_id)
            assert card is not None and card.outcome is not None
            assert card.outcome.by_user == next(
                name for name, r in reports.items() if pending_id in r["transitioned"]
            )
        assert store.outbox.outbox_pending_count() == 0
    finally:
        store.close()
