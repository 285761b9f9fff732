"""Code that runs in separate worker processes (spawned), acting like bot replicas."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.synchronize import Barrier
from typing import Any

from kandev_slack.core.domain import CardState
from kandev_slack.store import Database
from tests.kit.factories import answered, record_card

BARRIER_TIMEOUT_S = 120
PHASES = 5  # barrier waits per replica (and by the parent)


def _winners(pending_ids: list[str], threads: int, attempt: Any) -> list[str]:
    with ThreadPoolExecutor(threads) as pool:
        wins = list(pool.map(attempt, pending_ids))
    return [p for p, won in zip(pending_ids, wins, strict=True) if won]


def replica(
    url: str, name: str, pending_ids: list[str], threads: int, barrier: Barrier, results: Any
) -> None:
    """Race the other replicas: open the store (creating the schema), claim every id,
    transition every id, then drain the outbox. The parent takes part in the barrier
    (``PHASES`` waits) and fills the outbox between the second and third wait.

    Puts ``(name, {"claimed": [...], "transitioned": [...], "taken": [...]})`` on ``results``,
    or ``(name, {"error": ...})``.
    """
    store: Database | None = None
    try:
        barrier.wait(BARRIER_TIMEOUT_S)
        store = Database(url)
        replica_store = store
        barrier.wait(BARRIER_TIMEOUT_S)
        barrier.wait(BARRIER_TIMEOUT_S)
        claimed = _winners(pending_ids, threads, lambda p: record_card(replica_store, p))
        barrier.wait(BARRIER_TIMEOUT_S)
        transitioned = _winners(
            pending_ids,
            threads,
            lambda p: replica_store.cards.transition(p, answered(name), CardState.PENDING),
        )
        barrier.wait(BARRIER_TIMEOUT_S)
        taken: list[int] = []
        while batch := store.outbox.outbox_take(None, 2, name, lease_s=300):
            for item in batch:
                taken.append(item.id)
                store.outbox.outbox_done(item.id)
            time.sleep(0.005)  # let the other replicas interleave
        results.put((name, {"claimed": claimed, "transitioned": transitioned, "taken": taken}))
    except BaseException as exc:  # report instead of leaving the parent waiting
        barrier.abort()
        results.put((name, {"error": repr(exc)}))
        raise
    finally:
        if store is not None:
            store.close()
