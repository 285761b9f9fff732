"""Fencing: a replica that lost its lease never acts on it (two real processes, PostgreSQL).

Replica A takes a card post and is frozen (SIGSTOP) while its chat.postMessage is in flight
(the fake Slack holds the call, then carries it out). Its heartbeat stops with it, so its lease
runs out; replica B takes the post over, finds no card in the channel yet and posts it. Slack
then carries out A's call and answers it. When A wakes (SIGCONT) it reads that answer, finds another
message recorded for the card, records nothing and deletes its own: exactly one card stays in
the channel, and the store points at B's message (the one whose buttons it answers).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

import psycopg
import pytest

from kandev_slack.store import Database
from kandev_slack.usecases.leases import OUTBOX_LEASE_S
from tests.e2e.helpers import MARGIN_S, POLL_S, card_posts, db_question, start_bot
from tests.e2e.reliability.support import wait_until
from tests.kit.harness import CHANNEL

#: How long the fake Slack holds A's chat.postMessage before carrying it out: longer than A's
#: lease plus B's start and its post, so B finds no card when it looks.
HELD_S = 30.0
#: How long the woken replica may take to report itself healthy: a failed round is retried
#: every second, and each dead session of its pool fails one round at most.
RECOVER_S = 15.0


def _posting(pg_url: str, key: str) -> bool:
    dsn = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT last_error FROM outbox WHERE dedupe_key = %s", (key,)).fetchone()
    return row is not None and row[0] == "posting"


def _cards_in_channel(fake_slack, pending_id: str) -> list[str]:
    return [
        m.ts
        for m in fake_slack.messages(CHANNEL)
        if ((m.metadata or {}).get("event_payload") or {}).get("pending_id") == pending_id
    ]


@pytest.mark.postgres
@pytest.mark.fault("replica frozen (SIGSTOP) past its lease mid-post", guarantee=5)
def test_a_frozen_replica_that_lost_its_post_leaves_one_card(
    pg_url,  # first: its schema is dropped only after the bots are stopped
    bot_factory,
    seed,
    fake_slack,
    reliability,
):
    env = {"db_url": pg_url, "KANDEV_HINTS": "off"}
    frozen = start_bot(bot_factory, **env)
    fake_slack.faults.slow("chat.postMessage", HELD_S, times=1)
    bundle = seed([db_question()], title="Posted by a replica that froze")
    key = f"post:{bundle.pending_id}"
    wait_until(lambda: _posting(pg_url, key), POLL_S + MARGIN_S + 5, "replica A's post in flight")
    time.sleep(0.5)
    os.kill(frozen.proc.pid, signal.SIGSTOP)
    try:
        other = start_bot(bot_factory, **env)
        b_post = fake_slack.wait_for(
            lambda: next(iter(card_posts(fake_slack, bundle.pending_id)), None),
            OUTBOX_LEASE_S + POLL_S + MARGIN_S + 10,
            "replica B's post",
        )
        # Slack carries out A's call at last (A is still frozen).
        fake_slack.wait_for(
            lambda: len(card_posts(fake_slack, bundle.pending_id)) >= 2 or None,
            HELD_S + 10,
            "replica A's call carried out",
        )
        time.sleep(2.0)  # Slack's answer reaches A's socket while A is still frozen
    finally:
        os.kill(frozen.proc.pid, signal.SIGCONT)
    b_ts = str(b_post.response["ts"])

    def settled() -> bool:
        return _cards_in_channel(fake_slack, bundle.pending_id) == [b_ts]

    survived = True
    try:
        wait_until(settled, 20, "one card in the channel")
    except AssertionError:
        survived = False
    with Database(pg_url, upgrade=False) as store:
        card = store.cards.get(bundle.pending_id)
    shown = _cards_in_channel(fake_slack, bundle.pending_id)
    reliability.record(
        "replica frozen past its lease mid-post, the other posts, it wakes",
        survived=survived,
        duplicates=max(len(shown) - 1, 0),
        lost=0 if shown else 1,
    )
    assert shown == [b_ts], (shown, b_ts, frozen.logs()[-3000:])
    assert card is not None and card.ts == b_ts
    code, body = other.health()
    assert code == 200, body
    # A thread of A's that was inside a transaction when it froze finds its session ended by
    # PostgreSQL (idle_in_transaction_session_timeout, 30 s) and its round fails once; /healthz
    # shows that until the worker's next round goes through, a second later.
    with contextlib.suppress(AssertionError):
        wait_until(lambda: frozen.health()[0] == 200, RECOVER_S, "replica A healthy again")
    code, body = frozen.health()
    assert code == 200, (body, frozen.logs()[-3000:])
