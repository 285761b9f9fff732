"""Who opened the App Home tab: one row per user, last time wins, newest first, forgettable;
and the migration that adds the table upgrades an older database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from sqlalchemy import Engine, inspect

from kandev_slack.store import SCHEMA_VERSION, Database, migrate
from kandev_slack.store.sql.engine import make_engine
from kandev_slack.store.sql.url import normalize_url
from tests.kit.fakes import FakeClock


def test_a_user_is_recorded_once_with_their_latest_visit(store: Database, clock: FakeClock) -> None:
    start = clock.now
    store.viewers.home_opened("U0ALICE")
    clock.advance(10)
    store.viewers.home_opened("U0BOB")
    clock.advance(10)
    store.viewers.home_opened("U0ALICE")  # again: moves Alice to the front, no second row

    assert store.viewers.home_viewers(since=start) == ["U0ALICE", "U0BOB"]
    assert store.viewers.home_viewers(since=start + timedelta(seconds=15)) == ["U0ALICE"]
    assert store.viewers.home_viewers(since=start, limit=1) == ["U0ALICE"]


def test_old_visits_can_be_forgotten(store: Database, clock: FakeClock) -> None:
    store.viewers.home_opened("U0OLD")
    clock.advance(3600)
    store.viewers.home_opened("U0NEW")

    assert store.viewers.forget_home_viewers(before=clock.now - timedelta(seconds=60)) == 1
    assert store.viewers.home_viewers(since=clock.now - timedelta(days=365)) == ["U0NEW"]


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(normalize_url(db_url))
    yield engine
    engine.dispose()


def test_the_home_viewers_migration_upgrades_an_older_database(
    engine: Engine, open_store: Callable[..., Database], clock: FakeClock
) -> None:
    assert migrate(engine, "0003") == 3
    assert "home_viewers" not in inspect(engine).get_table_names()

    store = open_store(clock=clock)
    assert store.schema_version() == SCHEMA_VERSION >= 4
    assert "home_viewers" in inspect(engine).get_table_names()
    store.viewers.home_opened("U0ALICE")
    assert store.viewers.home_viewers(since=clock.now) == ["U0ALICE"]
