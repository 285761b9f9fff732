"""Shutdown is bounded whatever the database and Kandev do (a real process, PostgreSQL).

An outside transaction holds ``LOCK TABLE outbox`` (every statement of the hand-over on that
table waits for it) and an answer is on its way to Kandev, which never replies. SIGTERM: the
process still exits 0 within the 10 s hand-over budget (its database writes bounded by
statement timeouts); what it could not give back, its leases, simply expire.
"""

from __future__ import annotations

import signal
import time

import psycopg
import pytest

from kandev_slack.commands.run import HANDOVER_S
from kandev_slack.kits.fakeslack import ALICE
from tests.e2e.helpers import db_question, start_bot, wait_card
from tests.kit.harness import CHANNEL


@pytest.mark.postgres
@pytest.mark.fault(
    "SIGTERM with LOCK TABLE outbox held and a Kandev call that never ends", guarantee=5
)
def test_sigterm_exits_within_the_budget_despite_a_locked_table_and_a_stuck_answer(
    pg_url,  # first: its schema is dropped only after the bot is stopped
    bot_factory,
    seed,
    kandev_proxy,
    fake_slack,
    slack_driver,
    reliability,
):
    bot = start_bot(bot_factory, db_url=pg_url, KANDEV_URL=kandev_proxy.base_url)
    bundle = seed([db_question()], title="Answered while the table is locked")
    card = wait_card(fake_slack, bundle.pending_id)
    kandev_proxy.hold(bundle.pending_id, then="drop")  # Kandev never answers this call
    ack = slack_driver(bot.events_url).click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    assert ack.status == 200
    kandev_proxy.wait_held(bundle.pending_id)

    dsn = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn) as outside:
        outside.execute("LOCK TABLE outbox")  # held until this transaction ends
        started = time.monotonic()
        bot.proc.send_signal(signal.SIGTERM)
        try:
            code = bot.proc.wait(HANDOVER_S + 30)
        finally:
            took = time.monotonic() - started
            outside.rollback()
            kandev_proxy.release()
    reliability.record(
        f"SIGTERM, outbox locked, answer stuck in Kandev: exit {code} in {took:.1f}s",
        survived=code == 0 and took < HANDOVER_S,
    )
    assert code == 0, bot.logs()[-3000:]
    assert took < HANDOVER_S, (took, bot.logs()[-3000:])
