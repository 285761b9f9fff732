"""Database fixtures: every store test runs on SQLite (a temp file) and on PostgreSQL.

PostgreSQL: ``KANDEV_SLACK_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``). Each test gets its own freshly created
schema (search_path set through the URL), dropped afterwards, so other users of the database are
untouched. When the server is unreachable the PostgreSQL variants skip, except on CI
(``CI=true``), where they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from kandev_slack.store import Database, normalize_url
from tests.kit.fakes import FakeClock

POSTGRES_URL_ENV = "KANDEV_SLACK_TEST_POSTGRES_URL"
DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine]:
    url = normalize_url(os.environ.get(POSTGRES_URL_ENV, DEFAULT_POSTGRES_URL))
    engine = create_engine(
        url, poolclass=NullPool, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5}
    )
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        engine.dispose()
        reason = f"PostgreSQL unreachable at {url.render_as_string(hide_password=True)}: {exc.orig}"
        if _on_ci():
            pytest.fail(f"{reason} (CI=true: the PostgreSQL store tests must run)", pytrace=False)
        pytest.skip(reason)
    yield engine
    engine.dispose()


@pytest.fixture
def postgres_url(postgres_admin: Engine) -> Iterator[str]:
    """A PostgreSQL URL (psycopg driver) whose search_path is a fresh, private schema."""
    admin = postgres_admin
    schema = f"kandev_slack_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url: URL = admin.url.update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A URL of an empty database of each backend (a fresh file / a fresh schema)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('store') / 'kandev-slack.db'}"
    else:
        yield request.getfixturevalue("postgres_url")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))


@pytest.fixture
def open_store(db_url: str) -> Iterator[Callable[..., Database]]:
    """Open (more) stores on the test database; all are closed at teardown."""
    opened: list[Database] = []

    def _open(url: str | None = None, **kwargs: object) -> Database:
        store = Database(url or db_url, **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: Callable[..., Database], clock: FakeClock) -> Database:
    return open_store(clock=clock)
