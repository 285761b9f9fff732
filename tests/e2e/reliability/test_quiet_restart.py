"""A restart while it is quiet (the bot as a process, SIGTERM then start on the same database
file): a reminder held before the restart is neither lost nor sent twice — when the quiet
hours end exactly one summary arrives, and the held reminder itself is never posted."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from tests.e2e.helpers import MARGIN_S, POLL_S, db_question, start_bot, wait_card
from tests.e2e.reliability.support import wait_until
from tests.e2e.test_quiet import REMINDER, SUMMARY, posts, quiet_for, routing_file
from tests.kit.harness import CHANNEL

#: Longer than test_quiet.QUIET_S: a stop and a start of a process fit in it on a loaded
#: machine, and the test checks that the restart did happen while it was still quiet.
QUIET_RESTART_S = 45


def _held(db: Path) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, what, released_at FROM held_items").fetchall()
    return [(str(k), str(w), r) for k, w, r in rows]


@pytest.mark.fault("restart (SIGTERM) while a reminder waits for quiet hours", guarantee=4)
def test_a_reminder_held_across_a_restart_arrives_as_one_summary(
    bot_factory, seed, fake_slack, tmp_path, reliability
):
    db = tmp_path / "bot.db"
    ends = time.monotonic() + QUIET_RESTART_S
    config = routing_file(
        tmp_path,
        f'remind_after = "1s"\nquiet_hours = "{quiet_for(QUIET_RESTART_S)}"\nquiet_tz = "UTC"\n',
    )
    bot = start_bot(bot_factory, KANDEV_SLACK_CONFIG=config, QUIET_CHECK_S="0.2")
    held = seed([db_question()], title="Held across a restart")
    card = wait_card(fake_slack, held.pending_id, timeout=POLL_S + MARGIN_S + 10)
    wait_until(
        lambda: [r for r in _held(db) if r[1] == "reminder"],
        10 + MARGIN_S,
        "the reminder to be held",
    )

    bot.stop()  # SIGTERM
    bot.start()
    assert time.monotonic() < ends - 2, "the restart took too long: the quiet hours were over"
    time.sleep(POLL_S + 1)  # a round or two of the restarted bot while it is still quiet
    assert time.monotonic() < ends, "the quiet hours were over before the check"
    assert posts(fake_slack, CHANNEL, SUMMARY) == []
    assert [r for r in _held(db) if r[2] is None], "the held reminder was lost"

    summary = fake_slack.wait_for(
        lambda: next(iter(posts(fake_slack, CHANNEL, SUMMARY)), None),
        max(ends - time.monotonic(), 0) + 15 + MARGIN_S,
        "the summary once the quiet hours end",
    )
    time.sleep(2)
    fake_slack.settle(quiet=2, timeout=30)
    summaries = posts(fake_slack, CHANNEL, SUMMARY)
    reminders = [
        c for c in posts(fake_slack, CHANNEL, REMINDER) if c.params.get("thread_ts") == card.ts
    ]
    reliability.record(
        "restart while quiet: 1 summary, no held reminder",
        survived=True,
        lost=0 if summaries else 1,
        duplicates=max(len(summaries) - 1, 0) + len(reminders),
    )
    assert summary.params["text"] == f"{SUMMARY} 1 item waits"
    assert "Which database" in str(summary.params["blocks"])
    assert len(summaries) == 1
    assert reminders == []
    assert all(r[2] is not None for r in _held(db))  # every held row released
