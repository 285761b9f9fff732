"""The publisher's part of /healthz: a store error while it processes the outbox is reported,
and cleared at its next pass that the store answers, whether or not that pass finds anything
to send (an empty outbox must not keep the replica degraded after the database came back)."""

from __future__ import annotations

import threading
import time
from typing import Any

from sqlalchemy.exc import OperationalError

from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.wiring import build_publisher
from tests.kit.factories import KANDEV_URL
from tests.kit.fakes import FakeSlackGateway


class _Outage:
    """The store's outbox, which does not answer while ``down`` is set."""

    def __init__(self, outbox: Any) -> None:
        self._outbox = outbox
        self.down = threading.Event()
        self.takes = 0

    def outbox_take(self, *args: Any, **kwargs: Any) -> Any:
        self.takes += 1
        if self.down.is_set():
            raise OperationalError("SELECT", {}, Exception("connection refused"))
        return self._outbox.outbox_take(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._outbox, name)


def _until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.01)


def test_a_store_error_is_cleared_by_the_next_pass_even_with_nothing_to_send(
    store: Database, gateway: FakeSlackGateway
) -> None:
    health = Health()
    outbox = _Outage(store.outbox)
    publisher = build_publisher(
        outbox,
        store.cards,
        store.audit_log,
        gateway,
        kandev_url=KANDEV_URL,
        health=health,
        post_spacing_s=0,
    )
    outbox.down.set()
    stop = threading.Event()
    worker = threading.Thread(target=publisher.run, args=(stop, 0.02), daemon=True)
    worker.start()
    try:
        _until(lambda: not health.report().ok)
        assert health.report().reasons == ("outbox: store error while processing the outbox",)
        outbox.down.clear()  # the database answers again; the outbox is empty
        taken = outbox.takes
        _until(lambda: outbox.takes > taken + 1)  # a pass the store answered, and another
        assert health.report().ok, health.report().reasons
    finally:
        stop.set()
        publisher.wake()
        worker.join(timeout=5)
