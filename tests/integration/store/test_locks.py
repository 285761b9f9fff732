"""One stuck session never stops the others (PostgreSQL).

An outside session holds a channel's pace row (``SELECT … FOR UPDATE`` in an open transaction,
like an operator's forgotten one): the publisher does not wait for it, the other channels'
posts and every edit go out, the locked channel's post is deferred and /healthz says why; once
the lock goes, the post follows. A replica frozen (SIGSTOP) inside its pace transaction is ended
by PostgreSQL (idle_in_transaction_session_timeout), and its lock with it. Every session of the
store is started with the lock, statement and idle-in-transaction timeouts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

from kandev_slack.ops.health import Health
from kandev_slack.store import Database, OutboxEntry
from kandev_slack.store.queues.pace import Pace, PaceBusy
from kandev_slack.store.sql.engine import SessionTimeouts
from kandev_slack.usecases.outbox.pacing import LOCKED_RETRY_S
from kandev_slack.wiring import build_publisher
from tests.kit.factories import KANDEV_URL, answered, record_card
from tests.kit.fakes import FakeSlackGateway

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[3]
#: A frozen replica: takes the pace row of C1 inside a store write transaction, then stops.
FREEZE = """
import os, signal, sys
from sqlalchemy import select
from kandev_slack.store import Database, OutboxEntry
from kandev_slack.store.sql.engine import SessionTimeouts
from kandev_slack.usecases.outbox.pacing import LOCKED_RETRY_S
from kandev_slack.store.schema import channel_pace
store = Database(sys.argv[1], timeouts=SessionTimeouts(idle_in_transaction_s=2.0))
with store.sql.write() as conn:
    conn.execute(select(channel_pace).where(channel_pace.c.channel == "C1").with_for_update())
    print("locked", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
"""


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Database]:
    with Database(postgres_url) as store:
        yield store


@pytest.fixture
def outside(postgres_url: str) -> Iterator[Connection]:
    """A session of an operator's (no timeouts of ours)."""
    engine = create_engine(postgres_url, poolclass=NullPool)
    with engine.connect() as conn:
        yield conn
    engine.dispose()


def _pace(store: Database, channel: str) -> None:
    store.outbox.pace_turn(channel, follow=False, held=None, pace=Pace(0, 0))


def test_every_session_has_the_timeouts(pg: Database) -> None:
    with pg.sql.read() as conn:
        shown = [
            conn.execute(text(f"SHOW {name}")).scalar_one()
            for name in (
                "lock_timeout",
                "statement_timeout",
                "idle_in_transaction_session_timeout",
            )
        ]
    assert shown == ["5s", "15s", "30s"]


def test_a_locked_pace_row_holds_up_neither_other_channels_nor_edits(
    pg: Database, outside: Connection
) -> None:
    gateway, health = FakeSlackGateway(), Health()
    publisher = build_publisher(
        pg.outbox, pg.cards, pg.audit_log, gateway, kandev_url=KANDEV_URL, health=health
    )
    for pending_id, channel in (("locked", "C1"), ("free", "C2"), ("edited", "C1")):
        record_card(pg, pending_id, channel=channel)
    pg.cards.mark_posted("edited", "C1", "1.1")
    gateway.cards[("C1", "1.1")] = (None, "edited")  # type: ignore[assignment]
    _pace(pg, "C1")  # the channel's row exists
    outside.begin()
    outside.execute(text("SELECT * FROM channel_pace WHERE channel = 'C1' FOR UPDATE"))
    try:
        assert pg.cards.transition("edited", answered())
        edited = pg.cards.get("edited")
        assert edited is not None
        for pending_id in ("locked", "free"):
            card = pg.cards.get(pending_id)
            assert card is not None
            publisher.enqueue_post(card)
        publisher.enqueue_update(edited)
        worker = threading.Thread(target=publisher.work_once, daemon=True)
        worker.start()
        worker.join(timeout=20)  # generous: without the fix it waits for ever
        assert not worker.is_alive(), "the publisher waited for the locked pace row"
        methods = [(c.method, c.params.get("pending_id")) for c in gateway.calls]
        assert ("chat.update", "edited") in methods
        assert ("chat.postMessage", "free") in methods
        assert ("chat.postMessage", "locked") not in methods
        report = health.report()
        assert any(r.startswith("locks C1:") for r in report.reasons), report.reasons
    finally:
        outside.rollback()
    deadline = time.monotonic() + 20
    while not any(c.params.get("pending_id") == "locked" for c in gateway.calls):
        assert time.monotonic() < deadline, "the deferred post never went"
        publisher.work_once()
        time.sleep(0.2)
    assert not any(r.startswith("locks") for r in health.report().reasons)


def test_a_post_whose_slot_came_while_the_row_was_locked_keeps_its_slot(
    pg: Database, outside: Connection
) -> None:
    """Replicas take turns in one row: a post that finds it locked when its slot comes keeps
    the slot and tries again within a moment, instead of giving it up (a second lost in its
    channel) and waiting LOCKED_WAIT_S."""
    gateway, health = FakeSlackGateway(), Health()
    publisher = build_publisher(
        pg.outbox, pg.cards, pg.audit_log, gateway, kandev_url=KANDEV_URL, health=health
    )
    for pending_id in ("first", "second"):
        record_card(pg, pending_id, channel="C1")
        card = pg.cards.get(pending_id)
        assert card is not None
        publisher.enqueue_post(card)
    publisher.work_once()  # the first goes; the second is given the next slot
    [waiting] = [e for e in _entries(pg) if e.payload.get("pending_id") == "second"]
    assert waiting.slot_at is not None
    time.sleep(max((waiting.slot_at - datetime.now(UTC)).total_seconds(), 0.0) + 0.05)
    outside.begin()
    outside.execute(text("SELECT * FROM channel_pace WHERE channel = 'C1' FOR UPDATE"))
    try:
        publisher.work_once()  # its slot came: the row is locked
        kept = pg.outbox.outbox_get(waiting.id)
        assert kept is not None and kept.slot_at == waiting.slot_at
        assert (kept.not_before - datetime.now(UTC)).total_seconds() <= LOCKED_RETRY_S
    finally:
        outside.rollback()
    deadline = time.monotonic() + 2 * LOCKED_RETRY_S + 1.0
    while not any(c.params.get("pending_id") == "second" for c in gateway.calls):
        assert time.monotonic() < deadline, "the post lost its slot"
        publisher.work_once()
        time.sleep(0.02)


def _entries(store: Database) -> list[OutboxEntry]:
    with store.sql.read() as conn:
        ids = conn.execute(text("SELECT id FROM outbox ORDER BY id")).scalars().all()
    return [e for e in (store.outbox.outbox_get(i) for i in ids) if e is not None]


def test_a_replica_frozen_inside_its_pace_transaction_is_ended_by_postgresql(
    pg: Database, postgres_url: str
) -> None:
    _pace(pg, "C1")
    frozen = subprocess.Popen(
        [sys.executable, "-c", FREEZE, postgres_url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert frozen.stdout is not None and frozen.stdout.readline().strip() == "locked"
        with pytest.raises(PaceBusy):
            _pace(pg, "C1")  # held by the frozen replica
        deadline = time.monotonic() + 30  # its idle_in_transaction timeout is 2 s
        while True:
            try:
                _pace(pg, "C1")
                break
            except PaceBusy:
                assert time.monotonic() < deadline, "the frozen replica's lock was never ended"
                time.sleep(0.2)
    finally:
        os.kill(frozen.pid, signal.SIGKILL)
        frozen.wait(10)
    _pace(pg, "C2")  # other channels never waited anyway
    assert SessionTimeouts().idle_in_transaction_s == 30.0
