"""Leases use the database's clock: two replicas whose machine clocks differ by 30 s, sharing
one PostgreSQL database, never both take one outbox item, and neither takes over a submission
the other is still sending."""

from __future__ import annotations

import multiprocessing
import threading
from collections import Counter
from typing import Any

import pytest

from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent
from kandev_slack.usecases.leases import HEARTBEAT_S
from tests.e2e.reliability import skewed

ITEMS = 12
SKEW_S = 30.0


@pytest.mark.postgres
@pytest.mark.fault("two replicas whose clocks differ by 30 s", guarantee=7)
def test_replicas_with_skewed_clocks_never_share_a_lease(pg_url, reliability) -> None:
    with Database(pg_url) as store:
        ids = {store.outbox.outbox_put("post", f"post:p{n}", {"n": n}) for n in range(ITEMS)}
        assert store.submissions.begin_submission(
            "p0", "live", "U1", SubmissionContent(action="answer")
        )  # being sent right now

        # The replica sending "live" renews its lease as the bot does (every HEARTBEAT_S), so it
        # stays live however long the spawned replicas take to start on a loaded machine.
        sending = threading.Event()
        heartbeat = threading.Thread(target=_renew_until, args=(store, "live", sending))
        heartbeat.start()
        ctx = multiprocessing.get_context("spawn")
        results = ctx.Queue()
        workers = [
            ctx.Process(target=skewed.replica, args=(pg_url, name, offset, 0.25, "live", results))
            for name, offset in (("on-time", 0.0), ("ahead", SKEW_S))
        ]
        for worker in workers:
            worker.start()
        try:
            reports: dict[str, dict[str, Any]] = dict(results.get(timeout=120) for _ in workers)
        finally:
            for worker in workers:
                worker.join(timeout=30)
                if worker.is_alive():
                    worker.kill()
            sending.set()
            heartbeat.join()
        assert all("error" not in r for r in reports.values()), reports
        assert (
            store.submissions.renew_submissions(["live"]) == 1
        )  # it was never taken over, still live

    takes = Counter(i for r in reports.values() for i in r["taken"])
    duplicates = sum(n - 1 for n in takes.values())
    reliability.record(
        "two replicas whose clocks differ by 30 s",
        guarantee=7,
        survived=duplicates == 0 and not reports["ahead"]["reclaimed"],
        duplicates=duplicates,
        lost=len(ids - set(takes)),
    )
    assert set(takes) == ids, "every item was taken"
    assert takes == Counter(dict.fromkeys(ids, 1)), f"an item was taken twice: {takes}"
    assert reports["ahead"]["stale"] == [], "a live submission looked abandoned"
    assert reports["ahead"]["reclaimed"] is False, "a live submission was taken over"


def _renew_until(store: Database, key: str, done: threading.Event) -> None:
    while not done.wait(HEARTBEAT_S / 4):
        store.submissions.renew_submissions([key])
