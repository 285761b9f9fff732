"""Issue 19 item 4: SQLite, the database file deleted (``rm kandev-slack.db*``) while the bot
runs, the bot as a process against the real Kandev.

It is noticed: ``/healthz`` reports ``database`` (503), writes are refused (a click is told
plainly that nothing was recorded or sent, and Kandev gets nothing), nothing is written into
the unlinked file. The next start, on a new empty database, does not post the waiting question
again: it finds the card Slack already shows (its message metadata) and adopts it, and the card
still answers.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from kandev_slack.kits.fakeslack import ALICE
from tests.e2e.helpers import (
    card_posts,
    db_question,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.support import still_pending
from tests.kit.harness import CHANNEL


def _wait_health(bot, status: int, timeout: float = 15.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        code, body = bot.health()
        if code == status or time.monotonic() > deadline:
            assert code == status, body
            return body
        time.sleep(0.2)


@pytest.mark.fault("SQLite file deleted while running", guarantee=4)
def test_a_deleted_database_file_is_noticed_and_the_next_start_posts_nothing_twice(
    bot_factory, seed, fake_slack, slack_driver, tmp_path, reliability
) -> None:
    db_file = tmp_path / "lost.db"
    bot = start_bot(bot_factory, db_url=f"sqlite:///{db_file}")
    bundle = seed([db_question()], title="Asked before the database was lost")
    card = wait_card(fake_slack, bundle.pending_id)
    assert bot.health()[0] == 200

    for path in tmp_path.glob("lost.db*"):  # rm lost.db*
        Path(path).unlink()

    body = _wait_health(bot, 503)
    assert any(r.startswith("database:") and "deleted" in r for r in body["reasons"]), body
    driver = slack_driver(bot.events_url)
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    told = wait_ephemeral(fake_slack, ALICE.id, "not* recorded")
    assert "database" in told.all_text, told.all_text
    time.sleep(1.0)
    assert still_pending(seed.server, bundle)  # nothing was sent to Kandev
    assert not db_file.exists()  # nothing wrote a new file in its place
    bot.stop()
    logs = bot.logs()
    assert logs.count("the database file lost.db was deleted (") == 1, logs[-3000:]  # said once
    assert "Traceback" not in logs, logs[-3000:]  # the loops wait it out in one line each

    again = start_bot(bot_factory, db_url=f"sqlite:///{db_file}")
    # Discovery claims the bundle anew on the empty database: the card Slack shows is adopted.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _card_known(db_file, bundle.pending_id) is None:
        time.sleep(0.2)
    assert _card_known(db_file, bundle.pending_id) == card.ts
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1
    assert again.health()[0] == 200

    driver = slack_driver(again.events_url)
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    posts = len(card_posts(fake_slack, bundle.pending_id))
    assert posts == 1, posts
    reliability.record(
        "SQLite file deleted while running",
        survived=True,
        duplicates=posts - 1,
        detail="refused writes, adopted the card on restart",
    )


def _card_known(db_file: Path, pending_id: str) -> str | None:
    """The ts the (new) database records for the card of ``pending_id``."""
    if not db_file.exists():
        return None
    with sqlite3.connect(db_file) as conn:
        try:
            query = "SELECT ts FROM cards WHERE pending_id = ?"
            row = conn.execute(query, (pending_id,)).fetchone()
        except sqlite3.OperationalError:
            return None  # not migrated yet
    return None if row is None else row[0]
