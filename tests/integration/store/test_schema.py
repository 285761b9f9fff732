"""Schema versioning with Alembic: fresh create, idempotent reopen, upgrade from every released
version (also of the pre-Alembic code), refusal of newer, a failing revision, concurrency, and
the head schema equal to schema.py."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, event, insert, inspect, select, text

from kandev_slack.store import (
    REVISIONS,
    SCHEMA_VERSION,
    AuditRepository,
    CardsRepository,
    Database,
    DigestsRepository,
    FollowupsRepository,
    HomeViewersRepository,
    LinksRepository,
    OutboxRepository,
    Retention,
    StoreError,
    SubmissionsRepository,
    migrate,
)
from kandev_slack.store.cards.claims import ClaimsRepository
from kandev_slack.store.cards.snoozes import SnoozesRepository
from kandev_slack.store.cards.thread_replies import ThreadRepliesRepository
from kandev_slack.store.migrations import (
    SCRIPT_LOCATION,
    alembic_config,
    current_revision,
    locked_transaction,
    pending,
)
from kandev_slack.store.schema import audit_log, metadata, schema_version
from kandev_slack.store.sql.engine import make_engine
from kandev_slack.store.sql.url import normalize_url
from tests.integration.store import old_schemas
from tests.kit.hot_queries import (
    COLD_METHODS,
    HOT_QUERIES,
    capture,
    full_scans,
    plans,
    prepare_probe,
)

HEAD = REVISIONS[-1].revision
#: The repositories of a Database (db.cards, db.submissions, db.outbox, db.followups, db.audit_log,
#: db.viewers, db.retention).
REPOSITORIES = (
    CardsRepository,
    SubmissionsRepository,
    OutboxRepository,
    FollowupsRepository,
    AuditRepository,
    HomeViewersRepository,
    ThreadRepliesRepository,
    ClaimsRepository,
    SnoozesRepository,
    DigestsRepository,
    LinksRepository,
    Retention,
)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(normalize_url(db_url))
    yield engine
    engine.dispose()


def _versions(engine: Engine) -> list[tuple[int, datetime]]:
    """The pre-Alembic version record, kept in step with the revisions."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(schema_version.c.version, schema_version.c.applied_at).order_by("version")
        ).all()
    return [(row.version, row.applied_at) for row in rows]


def _alembic_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _schema_diff(engine: Engine) -> list[object]:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_server_default": True})
        return list(compare_metadata(context, metadata))


def test_the_revisions_are_the_versions_in_one_line() -> None:
    assert [r.revision for r in REVISIONS] == [f"{n:04d}" for n in range(1, 22)]
    assert [r.version for r in REVISIONS] == list(range(1, SCHEMA_VERSION + 1))
    # the same descriptions the hand-written migrations recorded (a stamped database has those)
    old = old_schemas.MIGRATIONS
    assert [r.description for r in REVISIONS[: len(old)]] == [m.description for m in old]
    assert (
        old_schemas.LAST_VERSION == 10 and SCHEMA_VERSION == 21
    )  # 11: thread replies, 12: claims, 13: snoozes, 14: the pace's seen_at, 15: card kinds,
    # 16: quiet hours and calm DMs, 17: digests, 18: identical items (a card's thread),
    # 19: people's own Kandev accounts (links, parked clicks), 20: the audit's Kandev account,
    # 21: gathering DMs purged (an index on their last card's time)


def test_fresh_database_gets_every_version(
    engine: Engine, open_store: Callable[..., Database]
) -> None:
    store = open_store()
    assert store.schema_version() == SCHEMA_VERSION == REVISIONS[-1].version
    assert _alembic_revision(engine) == HEAD
    versions = _versions(engine)
    assert [v for v, _ in versions] == [r.version for r in REVISIONS]
    assert all(at.tzinfo is UTC for _, at in versions)
    assert {"cards", "audit_log", "submissions", "outbox"} <= set(inspect(engine).get_table_names())


def test_the_head_schema_is_what_schema_py_declares(
    engine: Engine, open_store: Callable[..., Database]
) -> None:
    open_store().close()
    assert _schema_diff(engine) == []


def test_reopening_is_a_no_op(engine: Engine, open_store: Callable[..., Database]) -> None:
    open_store().close()
    before = _versions(engine)
    store = open_store()
    assert _versions(engine) == before
    assert migrate(engine) == SCHEMA_VERSION
    assert _versions(engine) == before
    assert _alembic_revision(engine) == HEAD
    assert store.schema_version() == SCHEMA_VERSION
    with engine.connect() as conn:
        assert pending(conn) == []


def test_upgrade_from_an_older_version_keeps_the_data(
    engine: Engine, open_store: Callable[..., Database]
) -> None:
    assert migrate(engine, "0001") == 1
    assert "outbox" not in inspect(engine).get_table_names()
    with engine.connect() as conn:
        assert [r.version for r in pending(conn)] == list(range(2, SCHEMA_VERSION + 1))
    with engine.begin() as conn:
        conn.execute(
            insert(audit_log).values(
                at=datetime(2029, 1, 1, tzinfo=UTC),
                pending_id="p-old",
                user_id="U1",
                action="answer",
                source="button",
                result="won",
                detail="",
            )
        )
    store = open_store()
    assert store.schema_version() == SCHEMA_VERSION
    assert [v for v, _ in _versions(engine)] == [r.version for r in REVISIONS]
    [entry] = store.audit_log.audit_entries("p-old")
    assert (entry.user, entry.result, entry.at) == ("U1", "won", datetime(2029, 1, 1, tzinfo=UTC))
    assert entry.kandev_user is None  # written before the audit named Kandev accounts
    assert store.outbox.outbox_put("post", "k", {}) is not None  # the upgrade's tables work


AT = datetime(2029, 3, 4, 5, 6, 7, tzinfo=UTC)

#: One row per table, as the released version that first had the table wrote it.
OLD_ROWS: dict[str, tuple[int, dict[str, object]]] = {
    "cards": (
        1,
        {
            "pending_id": "p-old",
            "task_id": "t1",
            "session_id": "s1",
            "workspace_id": "w1",
            "channel": "C1",
            "ts": "1.2",
            "state": "pending",
            "bundle_json": "{}",
            "task_json": "{}",
            "outcome_json": None,
            "claimed_at": AT,
            "posted_at": AT,
            "resolved_at": None,
            "created_at": AT,
            "updated_at": AT,
        },
    ),
    "audit_log": (
        1,
        {
            "at": AT,
            "pending_id": "p-old",
            "user_id": "U1",
            "action": "answer",
            "source": "button",
            "result": "won",
            "detail": "",
        },
    ),
    "submissions": (
        2,
        {
            "submission_key": "k-old",
            "pending_id": "p-old",
            "user_id": "U1",
            "payload_json": "{}",
            "result_json": None,
            "created_at": AT,
            "leased_at": AT,
            "finished_at": None,
        },
    ),
    "outbox": (
        3,
        {
            "kind": "post",
            "dedupe_key": "post:p-old",
            "channel": "C1",
            "payload_json": "{}",
            "status": "pending",
            "attempts": 0,
            "not_before": AT,
            "lease_owner": None,
            "lease_until": None,
            "last_error": "",
            "created_at": AT,
            "updated_at": AT,
            "finished_at": None,
        },
    ),
    "home_viewers": (4, {"user_id": "U1", "opened_at": AT}),
    "card_messages": (
        8,
        {
            "key": "escalation:p-old",
            "pending_id": "p-old",
            "kind": "escalation",
            "target": "C2",
            "channel": None,
            "ts": None,
            "note": "",
            "created_at": AT,
            "posted_at": None,
        },
    ),
    "card_followups": (
        8,
        {"pending_id": "p-old", "reminders_sent": 1, "escalated": 0, "updated_at": AT},
    ),
    "subscriptions": (9, {"user_id": "U1", "kind": "all", "value": "", "created_at": AT}),
    "channel_pace": (10, {"channel": "C1", "free_at": AT, "cards_at": AT, "follows_at": AT}),
}

#: Columns a later version added, with what an older row reads in them after the upgrade.
ADDED: dict[str, dict[str, object]] = {
    "submissions": {"resends": 0},
    "cards": {"question_key": None, "past_json": None, "kind": "question"},
    "card_followups": {"notified": 0},
    "outbox": {"slot_at": None, "item_kind": "question"},
    "audit_log": {"kandev_user_id": None},
}


@pytest.mark.parametrize("version", range(1, old_schemas.LAST_VERSION + 1))
def test_a_database_of_every_released_version_upgrades_with_its_data(
    engine: Engine, open_store: Callable[..., Database], version: int
) -> None:
    old_schemas.build(engine, version)  # as the hand-written migrations left it
    written = {t: row for t, (since, row) in OLD_ROWS.items() if since <= version}
    with engine.begin() as conn:
        for table, row in written.items():
            conn.execute(insert(old_schemas.metadata.tables[table]).values(**row))
    before = _versions(engine)
    with engine.connect() as conn:
        assert current_revision(conn) == f"{version:04d}"  # recognised before any change
        assert [r.version for r in pending(conn)] == list(range(version + 1, SCHEMA_VERSION + 1))
    assert _alembic_revision(engine) is None

    store = open_store()
    assert store.schema_version() == SCHEMA_VERSION
    assert _alembic_revision(engine) == HEAD
    assert _versions(engine)[:version] == before  # the old record kept, the new steps added
    assert [v for v, _ in _versions(engine)] == [r.version for r in REVISIONS]
    with engine.connect() as conn:
        for table, row in written.items():
            [got] = conn.execute(select(metadata.tables[table])).mappings().all()
            assert {k: got[k] for k in row} == row, table
            for column, value in ADDED.get(table, {}).items():
                assert got[column] == value, (table, column)
    assert _schema_diff(engine) == []
    # and the store works on it
    assert store.outbox.outbox_put("post", "post:new", {}) is not None
    assert store.audit_log.audit_entries("p-old")[0].at == AT


def test_a_database_at_head_is_untouched(
    engine: Engine, open_store: Callable[..., Database]
) -> None:
    open_store().close()
    before = _versions(engine)
    statements: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        statements.append(statement.lstrip().split(None, 1)[0].upper())

    event.listen(engine, "before_cursor_execute", record)
    try:
        assert migrate(engine) == SCHEMA_VERSION
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert "SELECT" in statements
    assert not {"CREATE", "ALTER", "INSERT", "UPDATE", "DELETE", "DROP"} & set(statements)
    assert _versions(engine) == before
    assert _alembic_revision(engine) == HEAD


def test_a_newer_database_is_refused(engine: Engine, open_store: Callable[..., Database]) -> None:
    open_store().close()
    with engine.begin() as conn:
        conn.execute(text(f"UPDATE alembic_version SET version_num = '{SCHEMA_VERSION + 1:04d}'"))
    with pytest.raises(StoreError, match="newer than this kandev-slack supports"):
        open_store()


def test_a_newer_database_of_the_old_record_is_refused(
    engine: Engine, open_store: Callable[..., Database]
) -> None:
    old_schemas.build(engine, old_schemas.LAST_VERSION)
    with engine.begin() as conn:
        conn.execute(
            insert(schema_version).values(
                version=SCHEMA_VERSION + 5, description="future", applied_at=datetime.now(UTC)
            )
        )
    with pytest.raises(StoreError, match="newer than this kandev-slack supports"):
        open_store()
    assert _alembic_revision(engine) is None  # not stamped


BROKEN = """\"""broken

Revision ID: 0003
Revises: 0002
\"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("half_done", sa.Column("id", sa.Integer, primary_key=True))
    raise RuntimeError("step failed")
"""


def test_a_failing_revision_changes_nothing(engine: Engine, tmp_path: Path) -> None:
    location = tmp_path / "alembic"
    shutil.copytree(SCRIPT_LOCATION, location, ignore=shutil.ignore_patterns("__pycache__"))
    for script in (location / "versions").glob("v*.py"):
        if not script.name.startswith(("v0001", "v0002")):
            script.unlink()
    (location / "versions" / "v0003_broken.py").write_text(BROKEN)

    assert migrate(engine, "0002") == 2
    with pytest.raises(RuntimeError, match="step failed"):
        migrate(engine, script_location=location)
    tables = set(inspect(engine).get_table_names())
    assert "half_done" not in tables
    assert "outbox" not in tables
    assert [v for v, _ in _versions(engine)] == [1, 2]
    assert _alembic_revision(engine) == "0002"


def test_concurrent_start_ups_create_the_schema_once(db_url: str, engine: Engine) -> None:
    def start() -> int:
        with Database(db_url) as store:
            return store.schema_version()

    with ThreadPoolExecutor(6) as pool:
        assert list(pool.map(lambda _: start(), range(6))) == [SCHEMA_VERSION] * 6
    assert [v for v, _ in _versions(engine)] == [r.version for r in REVISIONS]
    assert _alembic_revision(engine) == HEAD


def test_concurrent_start_ups_upgrade_an_old_database_once(db_url: str, engine: Engine) -> None:
    old_schemas.build(engine, 4)

    def start() -> int:
        with Database(db_url) as store:
            return store.schema_version()

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda _: start(), range(4))) == [SCHEMA_VERSION] * 4
    assert [v for v, _ in _versions(engine)] == [r.version for r in REVISIONS]
    assert _alembic_revision(engine) == HEAD


NEW_IN_5 = {
    "cards": {"ix_cards_unposted", "ix_cards_resolved"},
    "audit_log": {"ix_audit_log_at"},
    "outbox": {"ix_outbox_finished", "ix_outbox_lease_owner"},
}


def _index_names(engine: Engine, table: str) -> set[str]:
    return {ix["name"] for ix in inspect(engine).get_indexes(table) if ix["name"]}


def test_version_5_indexes_exist_when_created_and_after_an_upgrade(
    engine: Engine, open_store: Callable[..., Database]
) -> None:
    old_schemas.build(engine, 4)
    with engine.begin() as conn:  # a database of version 4 as released: without them
        for names in NEW_IN_5.values():
            for name in names:
                conn.execute(text(f"DROP INDEX {name}"))
    assert not NEW_IN_5["cards"] & _index_names(engine, "cards")
    store = open_store()
    assert store.schema_version() == SCHEMA_VERSION >= 5
    for table, names in NEW_IN_5.items():
        assert names <= _index_names(engine, table), table


#: PostgreSQL: make every plan that can use an index use one (the test tables are tiny, where a
#: whole-table read or a hash join would be cheaper), so a plan that still reads a table whole
#: has no index to use.
PREFER_INDEXES = ("enable_seqscan", "enable_hashjoin", "enable_mergejoin")


def test_every_hot_query_uses_an_index(engine: Engine, open_store: Callable[..., Database]) -> None:
    store = open_store()
    prepare_probe(store)
    captured = capture(store)
    silent = {name for name, sql in captured.items() if not sql}
    # SELECT 1, no table (``problem`` is a file check, then ping); every other call reaches its SQL
    assert silent == {"ping", "problem"}
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            for setting in PREFER_INDEXES:
                conn.exec_driver_sql(f"SET {setting} = off")
        found = plans(captured, conn)
    scanning = [(p.query, p.scans, p.sql, p.lines) for p in found if p.scans]
    assert not scanning, scanning
    # the indexes the cycle relies on are the ones used
    used: dict[str, str] = {}
    for plan in found:
        used[plan.query] = used.get(plan.query, "") + " ".join(plan.lines)
    for query, index in {
        "unposted": "ix_cards_unposted",
        "pending": "ix_cards_state_created",
        "unfinished_submissions": "ix_submissions_unfinished",
        "answered_like": "ix_cards_question",
        "by_kandev_user": "ix_kandev_links_kandev_user",
    }.items():
        assert index in used[query], (query, used[query])


def _methods(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_") and callable(getattr(cls, name))}


def test_every_store_method_is_hot_or_known_cold() -> None:
    # the Database's own (stats, ping…) and those of each of its repositories
    methods = _methods(Database).union(*map(_methods, REPOSITORIES))
    hot = {q.name for q in HOT_QUERIES}
    assert methods - hot - COLD_METHODS == set()
    assert (hot | COLD_METHODS) - methods == set()


def test_a_whole_table_read_is_recognised() -> None:
    sqlite_scan = ["SCAN outbox"]
    assert full_scans(sqlite_scan, "sqlite") == ["outbox"]
    assert full_scans(["SCAN outbox USING COVERING INDEX ix_outbox_due"], "sqlite") == ["outbox"]
    walk = ["SCAN cards USING INDEX ix_cards_resolved"]
    assert full_scans(walk, "sqlite", "SELECT * FROM cards ORDER BY resolved_at LIMIT ?") == []
    assert (
        full_scans(["SEARCH cards USING INDEX ix_cards_resolved (resolved_at<?)"], "sqlite") == []
    )
    assert full_scans(["SCAN subscriptions"], "sqlite") == []  # a small table
    pg_seq = ["Delete on submissions", "  ->  Seq Scan on submissions", "        Filter: (x)"]
    assert full_scans(pg_seq, "postgresql") == ["submissions"]
    pg_walk = [
        "GroupAggregate",
        "  ->  Index Only Scan using ix_outbox_due on outbox",
        "        Filter: ((status)::text <> 'done'::text)",
    ]
    assert full_scans(pg_walk, "postgresql") == ["outbox"]
    pg_search = [
        "  ->  Index Scan using ix_outbox_finished on outbox",
        "        Index Cond: (status = 'done')",
    ]
    assert full_scans(pg_search, "postgresql") == []


def test_a_migrator_waits_for_the_one_holding_the_lock(engine: Engine) -> None:
    done: list[int] = []
    with locked_transaction(engine):  # another replica migrating (advisory lock / IMMEDIATE)
        waiting = threading.Thread(target=lambda: done.append(migrate(engine)))
        waiting.start()
        waiting.join(timeout=1.0)
        assert waiting.is_alive() and not done  # blocked, not failed
    waiting.join(timeout=30)
    assert done == [SCHEMA_VERSION]
    assert [v for v, _ in _versions(engine)] == [r.version for r in REVISIONS]


def test_the_shipped_environment_serves_alembic_commands(db_url: str, engine: Engine) -> None:
    """What a developer runs to write the next revision: upgrade and autogenerate's check."""
    config = alembic_config()
    config.set_main_option("sqlalchemy.url", db_url.replace("%", "%%"))
    command.upgrade(config, "head")
    assert _alembic_revision(engine) == HEAD
    assert [v for v, _ in _versions(engine)] == [r.version for r in REVISIONS]
    command.check(config)  # no difference between the revisions and schema.py
