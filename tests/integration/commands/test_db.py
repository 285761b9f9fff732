"""`kandev-slack db upgrade` and `kandev-slack db status` as a person runs them, on SQLite and
PostgreSQL: clear output, exit codes, nothing changed by ``status``, no password shown."""

from __future__ import annotations

import os
import subprocess

from sqlalchemy import create_engine

from kandev_slack.store import REVISIONS, SCHEMA_VERSION, Database, normalize_url
from tests.integration.store import old_schemas
from tests.kit.factories import record_card
from tests.kit.harness import CONSOLE_SCRIPT


def db(command: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "KANDEV_"))}
    env["DATABASE_URL"] = url
    return subprocess.run(
        [str(CONSOLE_SCRIPT), "db", command], env=env, capture_output=True, text=True, timeout=60
    )


def lines(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    found = {}
    for line in result.stdout.splitlines():
        label, _, value = line.partition("  ")
        found[label.strip()] = value.strip()
    return found


def test_upgrade_applies_the_missing_steps_and_status_reports_without_changing(db_url) -> None:
    engine = create_engine(normalize_url(db_url))
    old_schemas.build(engine, 4)  # a database of an older kandev-slack (before Alembic)
    engine.dispose()

    old = db("status", db_url)
    assert old.returncode == 1, old
    missing = SCHEMA_VERSION - 4
    assert lines(old)["schema version"] == (
        f"4 ({missing} migration(s) to apply: run `kandev-slack db upgrade`)"
    )
    head = REVISIONS[-1].revision
    assert lines(old)["revision"] == f"0004 (head {head})"
    assert [line for line in old.stdout.splitlines() if line.startswith("would apply")] == [
        f"would apply         {r.version}: {r.description}" for r in REVISIONS if r.version > 4
    ]
    assert lines(db("status", db_url))["schema version"].startswith("4 ")  # status changes nothing

    up = db("upgrade", db_url)
    assert up.returncode == 0, up
    out = up.stdout.splitlines()
    assert f"schema version      4 → {SCHEMA_VERSION}" in out
    applied = [r for r in REVISIONS if r.version > 4]
    assert [line for line in out if line.startswith("applied")] == [
        f"applied             {r.version}: {r.description}" for r in applied
    ]
    again = db("upgrade", db_url)
    assert again.returncode == 0
    assert lines(again)["schema version"] == f"{SCHEMA_VERSION} (up to date; nothing to apply)"

    with Database(db_url) as store:
        record_card(store, "p1")
        record_card(store, "p2")
        item = store.outbox.outbox_put("post", "post:p1", {"pending_id": "p1"})
        assert item is not None
        store.outbox.outbox_fail(item, "channel_not_found")
        store.outbox.outbox_put("post", "post:p2", {"pending_id": "p2"})
    status = db("status", db_url)
    assert status.returncode == 0, status
    shown = lines(status)
    assert shown["schema version"] == f"{SCHEMA_VERSION} (up to date)"
    assert shown["revision"] == f"{head} (head {head})"
    assert "would apply" not in shown
    assert shown["pending cards"].startswith("2 (oldest waiting ")
    assert (shown["outbox pending"], shown["outbox failed"], shown["answers in flight"]) == (
        "1",
        "1",
        "0",
    )
    assert "Traceback" not in status.stderr


def test_status_of_a_missing_database_and_an_invalid_url(tmp_path) -> None:
    missing = tmp_path / "nothing-here.db"
    result = db("status", f"sqlite:///{missing}")
    assert result.returncode == 1
    assert f"none: {missing} does not exist; run `kandev-slack db upgrade`" in result.stdout
    assert not missing.exists()

    bad = db("upgrade", "mysql://user:pw@host/db")
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.splitlines()[0] == "kandev-slack: configuration problems:"
    assert "DATABASE_URL uses 'mysql'" in bad.stderr


def test_an_unreachable_database_fails_clearly_without_its_password() -> None:
    result = db("status", "postgresql://kandev:s3cr3t-pw@127.0.0.1:1/nothing?connect_timeout=2")
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith(
        "database            postgresql+psycopg://kandev:***@"
    )
    assert result.stderr.startswith("kandev-slack: cannot use the database: ")
    assert "Traceback" not in result.stderr
    assert "s3cr3t-pw" not in result.stdout + result.stderr
