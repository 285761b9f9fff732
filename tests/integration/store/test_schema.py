"""Schema versioning: fresh create, idempotent reopen, upgrade, refusal of newer, concurrency."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, Table, insert, inspect, select, text
from sqlalchemy.engine import Connection

from bot.store import MIGRATIONS, SCHEMA_VERSION, Migration, Store, StoreError, migrate
from bot.store.engine import make_engine
from bot.store.schema import audit_log, schema_version
from bot.store.url import normalize_url
from tests.kit.hot_queries import (
    COLD_METHODS,
    HOT_QUERIES,
    capture,
    full_scans,
    plans,
    prepare_probe,
)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(normalize_url(db_url))
    yield engine
    engine.dispose()


def _versions(engine: Engine) -> list[tuple[int, datetime]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(schema_version.c.version, schema_version.c.applied_at).order_by("version")
        ).all()
    return [(row.version, row.applied_at) for row in rows]


def test_fresh_database_gets_every_version(
    engine: Engine, open_store: Callable[..., Store]
) -> None:
    store = open_store()
    assert store.schema_version() == SCHEMA_VERSION == MIGRATIONS[-1].version
    versions = _versions(engine)
    assert [v for v, _ in versions] == [m.version for m in MIGRATIONS]
    assert all(at.tzinfo is UTC for _, at in versions)
    assert {"cards", "audit_log", "submissions", "outbox"} <= set(inspect(engine).get_table_names())


def test_reopening_is_a_no_op(engine: Engine, open_store: Callable[..., Store]) -> None:
    open_store().close()
    before = _versions(engine)
    store = open_store()
    assert _versions(engine) == before
    assert migrate(engine) == SCHEMA_VERSION
    assert _versions(engine) == before
    assert store.schema_version() == SCHEMA_VERSION


def test_upgrade_from_an_older_version_keeps_the_data(
    engine: Engine, open_store: Callable[..., Store]
) -> None:
    assert migrate(engine, MIGRATIONS[:1]) == 1
    assert "outbox" not in inspect(engine).get_table_names()
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
    assert [v for v, _ in _versions(engine)] == [m.version for m in MIGRATIONS]
    [entry] = store.audit_log.audit_entries("p-old")
    assert (entry.user, entry.result, entry.at) == ("U1", "won", datetime(2029, 1, 1, tzinfo=UTC))
    assert store.outbox.outbox_put("post", "k", {}) is not None  # the upgrade's tables work


def test_a_newer_database_is_refused(engine: Engine, open_store: Callable[..., Store]) -> None:
    open_store().close()
    with engine.begin() as conn:
        conn.execute(
            insert(schema_version).values(
                version=SCHEMA_VERSION + 5, description="future", applied_at=datetime.now(UTC)
            )
        )
    with pytest.raises(StoreError, match="newer than this kandev-slack supports"):
        open_store()


def test_a_failing_step_changes_nothing(engine: Engine) -> None:
    assert migrate(engine, MIGRATIONS[:2]) == 2

    def half_done(conn: Connection) -> None:
        Table("half_done", MetaData(), Column("id", Integer, primary_key=True)).create(conn)
        raise RuntimeError("step failed")

    steps = [*MIGRATIONS[:2], Migration(3, "broken", half_done)]
    with pytest.raises(RuntimeError, match="step failed"):
        migrate(engine, steps)
    tables = set(inspect(engine).get_table_names())
    assert "half_done" not in tables
    assert "outbox" not in tables
    assert [v for v, _ in _versions(engine)] == [1, 2]


def test_steps_must_be_ordered(engine: Engine) -> None:
    with pytest.raises(ValueError, match="increasing"):
        migrate(engine, [MIGRATIONS[1], MIGRATIONS[0]])


def test_concurrent_start_ups_create_the_schema_once(db_url: str, engine: Engine) -> None:
    def start() -> int:
        with Store(db_url) as store:
            return store.schema_version()

    with ThreadPoolExecutor(6) as pool:
        assert list(pool.map(lambda _: start(), range(6))) == [SCHEMA_VERSION] * 6
    assert [v for v, _ in _versions(engine)] == [m.version for m in MIGRATIONS]


NEW_IN_5 = {
    "cards": {"ix_cards_unposted", "ix_cards_resolved"},
    "audit_log": {"ix_audit_log_at"},
    "outbox": {"ix_outbox_finished", "ix_outbox_lease_owner"},
}


def _index_names(engine: Engine, table: str) -> set[str]:
    return {ix["name"] for ix in inspect(engine).get_indexes(table)}


def test_version_5_indexes_exist_when_created_and_after_an_upgrade(
    engine: Engine, open_store: Callable[..., Store]
) -> None:
    assert migrate(engine, MIGRATIONS[:4]) == 4
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


def test_every_hot_query_uses_an_index(engine: Engine, open_store: Callable[..., Store]) -> None:
    store = open_store()
    prepare_probe(store)
    captured = capture(store)
    silent = {name for name, sql in captured.items() if not sql}
    assert silent == {"ping"}  # SELECT 1, no table; every other call reaches its SQL
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
    }.items():
        assert index in used[query], (query, used[query])


def test_every_store_method_is_hot_or_known_cold() -> None:
    methods = {name for name in dir(Store) if not name.startswith("_")} - {"retention", "url"}
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
