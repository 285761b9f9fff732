"""The publisher's part of /healthz: a store error while it processes the outbox is reported,
and cleared at its next pass that the store answers, whether or not that pass finds anything
to send (an empty outbox must not keep the replica degraded after the database came back)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy.exc import OperationalError

from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.wiring import build_publisher
from tests.kit.factories import KANDEV_URL, record_card
from tests.kit.fakes import FakeSlackGateway


class _Outage:
    """The store's outbox, which does not answer while ``down`` is set; ``looks`` counts the
    publisher's looks at it (a take, or an idle pass's read of whether a take would find
    anything)."""

    def __init__(self, outbox: Any) -> None:
        self._outbox = outbox
        self.down = threading.Event()
        self.looks = 0

    def _look(self) -> None:
        self.looks += 1
        if self.down.is_set():
            raise OperationalError("SELECT", {}, Exception("connection refused"))

    def outbox_take(self, *args: Any, **kwargs: Any) -> Any:
        self._look()
        return self._outbox.outbox_take(*args, **kwargs)

    def outbox_next_due_s(self, *, leased: bool = False) -> Any:
        if leased:
            self._look()
        return self._outbox.outbox_next_due_s(leased=leased)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._outbox, name)


def _until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.01)


def _publisher(store: Database, outbox: Any, gateway: FakeSlackGateway, **kw: Any) -> Publisher:
    kw.setdefault("health", Health())
    return build_publisher(
        outbox, store.cards, store.audit_log, gateway, kandev_url=KANDEV_URL, **kw
    )


@contextmanager
def _running(publisher: Publisher, idle_wait_s: float = 0.02) -> Iterator[None]:
    stop = threading.Event()
    worker = threading.Thread(target=publisher.run, args=(stop, idle_wait_s), daemon=True)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        publisher.wake()
        worker.join(timeout=5)


def _posted(gateway: FakeSlackGateway) -> list[str]:
    return [c.params["pending_id"] for c in gateway.calls if c.method == "chat.postMessage"]


def _left_by_a_dead_replica(store: Database, gateway: FakeSlackGateway, pending_id: str) -> None:
    """A card another replica (its own publisher: ours is not woken) enqueued, then died with
    its post leased for 0.5 s."""
    assert record_card(store, pending_id)
    card = store.cards.get(pending_id)
    assert card is not None
    _publisher(store, store.outbox, gateway).enqueue_post(card)
    [item] = store.outbox.outbox_take(None, 10, "w-dead", lease_s=0.5)
    assert item.payload["pending_id"] == pending_id
    assert _posted(gateway) == []


def test_a_store_error_is_cleared_by_the_next_pass_even_with_nothing_to_send(
    store: Database, gateway: FakeSlackGateway
) -> None:
    health = Health()
    outbox = _Outage(store.outbox)
    outbox.down.set()
    with _running(_publisher(store, outbox, gateway, health=health, post_spacing_s=0)):
        _until(lambda: not health.report().ok)
        assert health.report().reasons == ("outbox: store error while processing the outbox",)
        outbox.down.clear()  # the database answers again; the outbox is empty
        looked = outbox.looks
        _until(lambda: outbox.looks > looked + 1)  # a pass the store answered, and another
        assert health.report().ok, health.report().reasons


def test_an_idle_publisher_only_reads_and_still_takes_over_a_dead_workers_item(
    store: Database, gateway: FakeSlackGateway
) -> None:
    outbox = _Outage(store.outbox)
    taken: list[int] = []
    real_take = outbox.outbox_take

    def counting_take(*args: Any, **kwargs: Any) -> Any:
        items = real_take(*args, **kwargs)
        taken.append(len(items))
        return items

    outbox.outbox_take = counting_take  # type: ignore[method-assign]
    with _running(_publisher(store, outbox, gateway, post_spacing_s=0)):
        _until(lambda: outbox.looks > 20)  # ~20 idle passes: each a read, no take
        assert taken == [0]  # the first pass only (a start is a change: it takes)
        _left_by_a_dead_replica(store, gateway, "p-dead")
        _until(lambda: _posted(gateway) == ["p-dead"])  # once its lease ran out, unwoken
        assert taken.count(0) == len(taken) - 1  # one take found it; every other look read


def test_a_settled_publisher_looks_again_on_a_change_when_due_or_after_a_while(
    store: Database, gateway: FakeSlackGateway
) -> None:
    outbox = _Outage(store.outbox)
    publisher = _publisher(store, outbox, gateway, post_spacing_s=0, store_writes=store.sql.writes)
    with _running(publisher):
        _until(lambda: outbox.looks >= 2)  # the first take, then one read: settled
        time.sleep(0.3)  # ~15 idle passes
        assert outbox.looks == 2
        # A change here (the record and the take are this process's writes) makes the next
        # pass look; the read says when the lease runs out, and the take then finds it.
        _left_by_a_dead_replica(store, gateway, "p-dead")
        _until(lambda: _posted(gateway) == ["p-dead"])
        settled = outbox.looks
        time.sleep(0.3)
        assert outbox.looks <= settled + 2  # its own writes: one more look, then settled
