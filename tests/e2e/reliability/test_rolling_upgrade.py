"""The rolling upgrade of docs/operations.md, for real: a replica of a previous release still
runs beside this release on one PostgreSQL database (migrated to this release's head). Two previous
releases: the last one before approvals were stored (3fb7d49), and the one deployed today
(2f49d25: it stores approvals, state 'pending', and has no kind columns).

- This release posts an approval and a question: the old replica must end, edit, repost or
  purge nothing of them (3fb7d49 once read the stored approval as an empty question bundle and
  ended its card "Unavailable" within a second); this release then resolves them as usual.
- The old replica (2f49d25) posts an approval and a question after the migration: its rows say
  kind 'question' (the column's default) whatever they hold; this release reads each as what it
  is, never ends, reposts or edits it twice, and resolves both as usual.

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

from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE
from kandev_slack.store.migrations import SCHEMA_VERSION, migrate
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    card_posts,
    db_question,
    outcome_line,
    outcome_updates,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.e2e.test_approvals import RM
from tests.kit.harness import CHANNEL, BotProcess, Permissions, bot_env

pytestmark = pytest.mark.postgres

#: The last release before approvals were stored in the cards table (its
#: ``kandev_slack/store/cards/card_row.py`` reads every stored item as a question bundle), schema
#: 0010.
BEFORE_APPROVALS = "3fb7d49a5549906ce808bba6a8724b1326ca841c"
#: The release deployed today: it stores approvals (``perm:`` keys, state 'pending') in a
#: schema without kinds (0013).
DEPLOYED = "2f49d256b06bf039f1c5e748142fbd28b90af8e9"
#: Each previous release and the schema revision it makes.
PREVIOUS_RELEASES = {BEFORE_APPROVALS: "0010", DEPLOYED: "0013"}
REPO = Path(__file__).resolve().parents[3]
#: How long the old replica is watched beside the waiting approval: several of its sync cycles
#: (every 1 s here) and its first housekeeping pass.
WATCH_S = 6.0


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture(params=sorted(PREVIOUS_RELEASES), ids=lambda commit: commit[:7])
def release(request: pytest.FixtureRequest) -> str:
    """A previous release (its commit)."""
    return str(request.param)


@pytest.fixture
def previous_release(release: str, tmp_path: Path) -> Iterator[Path]:
    """The previous release's tree, extracted from git into a temporary directory."""
    yield _extracted(release, tmp_path)


@pytest.fixture
def deployed_release(tmp_path: Path) -> Iterator[Path]:
    """The release deployed today, extracted from git."""
    yield _extracted(DEPLOYED, tmp_path)


def _extracted(commit: str, tmp_path: Path) -> Path:
    where = tmp_path / "previous-release"
    where.mkdir()
    if not (REPO / ".git").exists():
        reason = f"no git history in {REPO}: cannot check out the previous release"
        if _on_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    archive = _archive(commit)
    if archive.returncode != 0:
        # A shallow clone: its history is fetched once from where it was cloned, then again.
        subprocess.run(
            ["git", "-C", str(REPO), "fetch", "--quiet", "--unshallow"],
            capture_output=True,
            check=False,
            timeout=120,
        )
        archive = _archive(commit)
    if archive.returncode != 0:
        pytest.fail(
            f"git archive {commit} failed (a shallow clone?): "
            f"{archive.stderr.decode(errors='replace')}",
            pytrace=False,
        )
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


def _archive(commit: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, "bot"],
        capture_output=True,
        check=False,
    )


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


def _untouched_for(seconds: float, fake_slack, bot: BotProcess, cards: dict[str, str]) -> None:
    """For ``seconds``, no card of ``cards`` (key -> ts) gets an outcome line (``bot``: whose
    log to show)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for key, ts in cards.items():
            assert outcome_line(fake_slack.message(CHANNEL, ts)) is None, (
                f"the card of {key} was ended:\n" + bot.logs()[-3000:]
            )
        time.sleep(0.2)


def _still_syncing(old: BotProcess) -> None:
    """The old replica runs and its sync cycles (which read every waiting card) succeed."""
    assert old.proc is not None and old.proc.poll() is None, old.logs()[-3000:]
    _, health = old.health()
    age = health["last_sync_age_s"]
    assert age is not None and age < 3, (health, old.logs()[-3000:])
    assert "Traceback" not in old.logs(), old.logs()[-3000:]


def _edits(fake_slack, ts: str) -> list[object]:
    return [c for c in fake_slack.calls("chat.update") if c.params.get("ts") == ts]


def test_a_replica_of_the_previous_release_leaves_an_approval_alone(
    pg_url, release, previous_release, bot_factory, seed, fake_slack, slack_driver, kandev, tmp_path
) -> None:
    old = _old_replica(previous_release, fake_slack, kandev, pg_url, tmp_path).start()
    try:
        # It is the previous release that runs: it made the schema as it knew it.
        assert _schema_revision(pg_url) == PREVIOUS_RELEASES[release], old.logs()[-3000:]
        new = start_bot(bot_factory, db_url=pg_url)  # migrates the shared schema to its head
        assert (
            f"this release knows schema version {SCHEMA_VERSION} and the kinds approval, question"
            in new.logs()
        )
        seeded = seed.permission([RM], title="Rolling upgrade")
        key = approval_key(seeded.request_id)
        card = wait_card(fake_slack, key)
        bundle = seed([db_question()], title="Rolling upgrade: a question")
        question = wait_card(fake_slack, bundle.pending_id)
        posted = len(fake_slack.messages(CHANNEL))

        _untouched_for(WATCH_S, fake_slack, old, {key: card.ts, bundle.pending_id: question.ts})
        _still_syncing(old)
        # Nothing else of it was written: one card each, never edited, still waiting.
        for pending_id, ts in ((key, card.ts), (bundle.pending_id, question.ts)):
            assert len(card_posts(fake_slack, pending_id)) == 1
            assert _edits(fake_slack, ts) == []
            row = _card_row(pg_url, pending_id)
            assert row["resolved_at"] is None and row["outcome_json"] is None
        assert len(fake_slack.messages(CHANNEL)) == posted

        # This release resolves them as usual.
        driver = slack_driver(new.events_url)
        assert driver.click(CHANNEL, card.ts, text="Allow once", user=ALICE).status == 200
        done = wait_outcome(fake_slack, card.ts, "✅", timeout=10 + MARGIN_S)
        assert outcome_line(done).startswith(f"✅ Allowed once by <@{ALICE.id}> in Slack")
        got = Permissions(seed.server).agent_outcomes(seeded.task_id)
        assert [g["outcome"] for g in got] == [{"outcome": "selected", "optionId": "allow_once"}]
        assert driver.click(CHANNEL, question.ts, text="PostgreSQL", user=ALICE).status == 200
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
        assert final["status"] == "answered", final
        assert old.proc is not None and old.proc.poll() is None, old.logs()[-3000:]
    finally:
        old.stop()


def test_cards_the_deployed_release_posts_after_the_migration_are_read_as_what_they_are(
    pg_url, deployed_release, bot_factory, seed, fake_slack, slack_driver, kandev, tmp_path
) -> None:
    old = _old_replica(deployed_release, fake_slack, kandev, pg_url, tmp_path).start()
    try:
        assert _schema_revision(pg_url) == PREVIOUS_RELEASES[DEPLOYED], old.logs()[-3000:]
        # The README's step 2: the schema is upgraded (``kandev-slack db upgrade``) while the
        # deployed release runs; it then goes on discovering and posting, as it knows how.
        engine = create_engine(pg_url)
        try:
            migrate(engine)
        finally:
            engine.dispose()
        seeded = seed.permission([RM], title="Posted by the deployed release")
        key = approval_key(seeded.request_id)
        card = wait_card(fake_slack, key)
        bundle = seed([db_question()], title="Asked of the deployed release")
        question = wait_card(fake_slack, bundle.pending_id)
        cards = {key: card.ts, bundle.pending_id: question.ts}

        # This release starts beside it, then the old replica is stopped (the rolling restart).
        new = start_bot(bot_factory, db_url=pg_url)
        _untouched_for(WATCH_S, fake_slack, new, cards)
        _still_syncing(old)
        old.stop()
        _untouched_for(2.0, fake_slack, new, cards)
        for pending_id, ts in cards.items():
            assert len(card_posts(fake_slack, pending_id)) == 1, pending_id
            assert _edits(fake_slack, ts) == [], pending_id
        _, health = new.health()
        assert "newer_release" not in str(health), health

        # This release resolves both as usual, each edited once with its outcome.
        driver = slack_driver(new.events_url)
        assert driver.click(CHANNEL, card.ts, text="Allow once", user=ALICE).status == 200
        done = wait_outcome(fake_slack, card.ts, "✅", timeout=10 + MARGIN_S)
        assert outcome_line(done).startswith(f"✅ Allowed once by <@{ALICE.id}> in Slack")
        got = Permissions(seed.server).agent_outcomes(seeded.task_id)
        assert [g["outcome"] for g in got] == [{"outcome": "selected", "optionId": "allow_once"}]
        assert driver.click(CHANNEL, question.ts, text="PostgreSQL", user=ALICE).status == 200
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
        assert final["status"] == "answered", final
        wait_outcome(fake_slack, question.ts, "✅", timeout=10 + MARGIN_S)
        time.sleep(POLL_S * 2)
        for pending_id, ts in cards.items():
            assert len(card_posts(fake_slack, pending_id)) == 1, pending_id
            assert len(outcome_updates(fake_slack, ts)) == 1, pending_id
        assert "Traceback" not in new.logs(), new.logs()[-3000:]
    finally:
        old.stop()
