"""A serving process keeps out of memory what it does not use again (issue 35, point 5: ≤ 100 MB
RSS): Alembic and its templates load only to apply or list revisions, a schema upgrade at
start runs in a child process, and ``cryptography`` loads only with a secret key. Each scenario
runs in a fresh interpreter (this one has imported everything already)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from sqlalchemy import text

from kandev_slack.store import SCHEMA_VERSION, Database, normalize_url
from kandev_slack.store.migrations import known_versions, revisions
from kandev_slack.store.sql.engine import make_engine

HEAVY = ("alembic", "mako", "cryptography")


def _fresh(code: str) -> dict[str, object]:
    """Run ``code`` in a new interpreter; it prints one JSON object last."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_versions_read_from_file_names_are_alembic_s_own() -> None:
    assert known_versions() == tuple(r.version for r in revisions())
    assert known_versions()[-1] == SCHEMA_VERSION


def test_a_serving_process_imports_no_migration_machinery_nor_cryptography() -> None:
    loaded = _fresh(
        f"""
        import json, sys
        import kandev_slack.cli, kandev_slack.app, kandev_slack.commands.run
        print(json.dumps({{"heavy": sorted({{m.split(".")[0] for m in sys.modules}}
                                         & set({HEAVY!r}))}}))
        """
    )
    assert loaded == {"heavy": []}


def test_a_database_behind_is_upgraded_in_a_child_and_opens_without_alembic(db_url: str) -> None:
    ran = _fresh(
        f"""
        import json, sys
        from kandev_slack.store import Database, normalize_url
        from kandev_slack.store.migrations import upgrade_apart
        from kandev_slack.store.sql.engine import make_engine
        engine = make_engine(normalize_url({db_url!r}))
        apart = upgrade_apart(engine)
        again = upgrade_apart(engine)  # at head now: nothing to do, no child
        engine.dispose()
        with Database({db_url!r}) as store:
            version = store.schema_version()
        print(json.dumps({{"apart": apart, "again": again, "version": version,
                          "alembic": "alembic" in sys.modules}}))
        """
    )
    assert ran == {"apart": True, "again": False, "version": SCHEMA_VERSION, "alembic": False}


def test_a_failed_upgrade_apart_leaves_the_error_to_the_store_s_own(db_url: str) -> None:
    with Database(db_url):
        pass
    engine = make_engine(normalize_url(db_url))
    try:
        with engine.begin() as conn:  # a newer release's schema: the child refuses it
            conn.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    finally:
        engine.dispose()
    ran = _fresh(
        f"""
        import json
        from kandev_slack.store import Database, StoreError, normalize_url
        from kandev_slack.store.migrations import upgrade_apart
        from kandev_slack.store.sql.engine import make_engine
        engine = make_engine(normalize_url({db_url!r}))
        apart = upgrade_apart(engine)
        engine.dispose()
        try:
            Database({db_url!r}).close()
            error = ""
        except StoreError as exc:
            error = str(exc)
        print(json.dumps({{"apart": apart, "error": error}}))
        """
    )
    assert ran["apart"] is False
    assert "newer than this kandev-slack supports" in str(ran["error"])  # as without a child
