"""`kandev-slack db upgrade` and `kandev-slack db status`: the database (DATABASE_URL) on its own.

``upgrade`` applies the schema migrations (Alembic revisions, see kandev_slack/store/migrations.py)
explicitly, for deployments that run them as a release step (``run`` applies them too, at every
start; on PostgreSQL an advisory lock serialises replicas starting at once). ``status`` changes
nothing: the schema version (its revision against the head, and what ``upgrade`` would apply)
and what an operator watches (waiting cards, the outbox, failed items, unfinished answers).

Exit codes: 0 done / up to date; 1 the database cannot be opened, is newer than this
kandev-slack, or (``status``) needs an upgrade; 2 DATABASE_URL is invalid.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from kandev_slack.config.settings import load_partial
from kandev_slack.core.exitcodes import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from kandev_slack.ops.redaction import redact
from kandev_slack.store import REVISIONS, SCHEMA_VERSION, Database, Revision, StoreError
from kandev_slack.store.migrations import current_version, migrate
from kandev_slack.store.sql.engine import make_engine
from kandev_slack.store.sql.url import is_sqlite_memory, normalize_url


def main_db(command: str) -> int:
    partial = load_partial()
    problems = [p for p in partial.problems if p.startswith("DATABASE_URL")]
    if problems:
        print("kandev-slack: configuration problems:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_CONFIG
    settings = partial.settings
    url = normalize_url(settings.database_url)
    shown = url.render_as_string(hide_password=True)
    print(f"{'database':<20}{shown}")
    try:
        if command == "upgrade":
            return _upgrade(url)
        return _status(url)
    except (SQLAlchemyError, StoreError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        reason = redact(first, settings.secret_values())[:300]
        print(f"kandev-slack: cannot use the database: {reason}", file=sys.stderr)
        return EXIT_FAILED


def _upgrade(url: URL) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            before = current_version(conn)
        after = migrate(engine)
    finally:
        engine.dispose()
    applied = [r for r in REVISIONS if before < r.version <= after]
    if not applied:
        print(f"{'schema version':<20}{after} (up to date; nothing to apply)")
        return EXIT_OK
    print(f"{'schema version':<20}{before} → {after}")
    for revision in applied:
        print(f"{'applied':<20}{_described(revision)}")
    return EXIT_OK


def _status(url: URL) -> int:
    if url.get_backend_name() == "sqlite" and not is_sqlite_memory(url):
        path = Path(url.database or "")
        if not path.exists():
            print(
                f"{'schema version':<20}none: {path} does not exist; run `kandev-slack db upgrade`"
            )
            return EXIT_FAILED
    with Database(url, upgrade=False) as store:
        version = store.schema_version()
        if version == 0:
            print(f"{'schema version':<20}0 (empty database); run `kandev-slack db upgrade`")
            return EXIT_FAILED
        if version > SCHEMA_VERSION:
            print(
                f"{'schema version':<20}{version}: newer than this kandev-slack supports "
                f"({SCHEMA_VERSION}); upgrade kandev-slack"
            )
            return EXIT_FAILED
        stats = store.stats()
    to_apply = [r for r in REVISIONS if r.version > version]
    pending = len(to_apply)
    if pending:
        print(
            f"{'schema version':<20}{version} ({pending} migration(s) to apply: "
            "run `kandev-slack db upgrade`)"
        )
    else:
        print(f"{'schema version':<20}{version} (up to date)")
    print(f"{'revision':<20}{_revision(version)} (head {REVISIONS[-1].revision})")
    for revision in to_apply:
        print(f"{'would apply':<20}{_described(revision)}")
    oldest = ""
    if stats.oldest_pending_at is not None:
        age = (datetime.now(UTC) - stats.oldest_pending_at).total_seconds()
        oldest = f" (oldest waiting {_duration(age)})"
    print(f"{'pending cards':<20}{stats.pending_cards}{oldest}")
    print(f"{'outbox pending':<20}{stats.outbox_pending}")
    print(f"{'outbox failed':<20}{stats.outbox_failed}")
    print(f"{'answers in flight':<20}{stats.unfinished_submissions}")
    return EXIT_FAILED if pending else EXIT_OK


def _described(revision: Revision) -> str:
    return f"{revision.version}: {revision.description}"


def _revision(version: int) -> str:
    return next(r.revision for r in REVISIONS if r.version == version)


def _duration(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"
