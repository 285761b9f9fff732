"""The upgrade of docs/operations.md, for real: a replica of the previous release (the last one
before approvals were stored) still runs beside this release on one PostgreSQL database while
this release posts an approval card. The old replica must end, edit, repost or purge nothing of
it (it once read the stored approval as an empty question bundle and ended its card
"Unavailable" within a second); this release then resolves it as usual.

The previous release is taken from this repository's git history at test time (``git
archive``) and run as a real process with ``PYTHONPATH`` pointing at it, from the same venv."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from bot.core.approval import approval_key
from bot.store.migrations import SCHEMA_VERSION
from fakeslack import ALICE
from tests.e2e.helpers import (
    MARGIN_S,
    card_posts,
    outcome_line,
    start_bot,
    wait_card,
    wait_outcome,
)
from tests.e2e.test_approvals import RM
from tests.kit.harness import CHANNEL, BotProcess, Permissions, bot_env

pytestmark = pytest.mark.postgres

#: The previous release: the last commit before approvals were stored in the cards table (its
#: ``bot/store/card_row.py`` reads every stored item as a question bundle).
PREVIOUS_RELEASE = "3fb7d49a5549906ce808bba6a8724b1326ca841c"
REPO = Path(__file__).resolve().parents[3]
#: How long the old replica is watched beside the waiting approval: several of its sync cycles
#: (every 1 s here) and its first housekeeping pass.
WATCH_S = 6.0


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture
def previous_release(tmp_path: Path) -> Iterator[Path]:
    """The previous release's tree, extracted from git into a temporary directory."""
    where = tmp_path / "previous-release"
    where.mkdir()
    if not (REPO / ".git").exists():
        reason = f"no git history in {REPO}: cannot check out the previous release"
        if _on_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", PREVIOUS_RELEASE, "bot"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        pytest.fail(
            f"git archive {PREVIOUS_RELEASE} failed (a shallow clone?): "
            f"{archive.stderr.decode(errors='replace')}",
            pytrace=False,
        )
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    yield where


def _old_replica(previous: Path, fake_slack, kandev, pg_url: str, tmp_path: Path) -> BotProcess:
    env = bot_env(fake_slack, kandev, pg_url, KANDEV_POLL_INTERVAL="1")
    env["PYTHONPATH"] = str(previous)
    return BotProcess(
        env,
        mode="http",
        log_path=tmp_path / "bot-previous-release.log",
        command=[sys.executable, "-m", "bot"],
        cwd=previous,
    )


def _schema_revision(pg_url: str) -> str:
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            return str(conn.scalar(text("SELECT version_num FROM alembic_version")))
    finally:
        engine.dispose()


def _card_row(pg_url: str, pending_id: str) -> dict[str, object]:
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                text("SELECT * FROM cards WHERE pending_id = :id"), {"id": pending_id}
            ).one()
            return dict(row._mapping)
    finally:
        engine.dispose()


def test_a_replica_of_the_previous_release_leaves_an_approval_alone(
    pg_url, previous_release, bot_factory, seed, fake_slack, slack_driver, kandev, tmp_path
) -> None:
    old = _old_replica(previous_release, fake_slack, kandev, pg_url, tmp_path).start()
    try:
        # It is the previous release that runs: it made the schema as it knew it (version 10).
        assert _schema_revision(pg_url) == "0010", old.logs()[-3000:]
        new = start_bot(bot_factory, db_url=pg_url)  # migrates the shared schema to its head
        assert (
            f"this release knows schema version {SCHEMA_VERSION} and the kinds approval, question"
            in new.logs()
        )
        seeded = seed.permission([RM], title="Rolling upgrade")
        key = approval_key(seeded.request_id)
        card = wait_card(fake_slack, key)
        posted = len(fake_slack.messages(CHANNEL))

        deadline = time.monotonic() + WATCH_S
        while time.monotonic() < deadline:
            assert outcome_line(fake_slack.message(CHANNEL, card.ts)) is None, (
                "the previous release ended the approval card:\n" + old.logs()[-3000:]
            )
            time.sleep(0.2)
        assert old.proc is not None and old.proc.poll() is None, old.logs()[-3000:]
        # It was working all along: its sync cycles (which read every waiting card) succeed.
        _, health = old.health()
        age = health["last_sync_age_s"]
        assert age is not None and age < 3, (health, old.logs()[-3000:])
        assert "Traceback" not in old.logs(), old.logs()[-3000:]
        # Nothing else of it was written: one card, never edited, still waiting.
        assert len(card_posts(fake_slack, key)) == 1
        assert len(fake_slack.messages(CHANNEL)) == posted
        edits = [c for c in fake_slack.calls("chat.update") if c.params.get("ts") == card.ts]
        assert edits == []
        row = _card_row(pg_url, key)
        assert row["resolved_at"] is None and row["outcome_json"] is None

        # This release resolves it as usual.
        driver = slack_driver(new.events_url)
        assert driver.click(CHANNEL, card.ts, text="Allow once", user=ALICE).status == 200
        done = wait_outcome(fake_slack, card.ts, "✅", timeout=10 + MARGIN_S)
        assert outcome_line(done).startswith(f"✅ Allowed once by <@{ALICE.id}> in Slack")
        got = Permissions(seed.server).agent_outcomes(seeded.task_id)
        assert [g["outcome"] for g in got] == [{"outcome": "selected", "optionId": "allow_once"}]
        assert old.proc.poll() is None, old.logs()[-3000:]
    finally:
        old.stop()
