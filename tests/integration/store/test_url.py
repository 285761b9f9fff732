"""DATABASE_URL normalisation and the SQLite file's permissions."""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev_slack.config.database_url import DatabaseUrlError
from kandev_slack.store import DEFAULT_DATABASE_URL, Database, StoreError, normalize_url
from kandev_slack.store.sql.engine import SQLITE_CACHE_KIB
from tests.kit.factories import record_card


@pytest.mark.parametrize(
    "given",
    [
        "postgres://bot:s3cret@db.example:5433/kandev?sslmode=require",
        "postgresql://bot:s3cret@db.example:5433/kandev?sslmode=require",
        "postgresql+psycopg://bot:s3cret@db.example:5433/kandev?sslmode=require",
    ],
)
def test_postgres_urls_are_normalised_to_psycopg(given: str) -> None:
    url = normalize_url(given)
    assert url.drivername == "postgresql+psycopg"
    assert (url.username, url.password, url.host, url.port, url.database) == (
        "bot",
        "s3cret",
        "db.example",
        5433,
        "kandev",
    )
    assert url.query == {"sslmode": "require"}


@pytest.mark.parametrize("given", [DEFAULT_DATABASE_URL, "sqlite:////var/lib/k.db", "sqlite://"])
def test_sqlite_urls_are_kept(given: str) -> None:
    assert normalize_url(given).render_as_string(hide_password=False) == given


@pytest.mark.parametrize("given", ["mysql://root:hunter2@db/k", "not a url", "redis://:hunter2@h"])
def test_unsupported_urls_are_refused_without_the_password(given: str) -> None:
    with pytest.raises(DatabaseUrlError, match="DATABASE_URL") as info:
        normalize_url(given)
    assert "hunter2" not in str(info.value)


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("permissive_umask")
def test_new_sqlite_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "kandev-slack.db"
    with Database(f"sqlite:///{path}") as store:
        assert record_card(store, "p1")  # writes, so the WAL companions exist
        assert _mode(path) == 0o600
        for companion in (Path(f"{path}-wal"), Path(f"{path}-shm")):
            assert companion.exists()
            assert _mode(companion) == 0o600


def test_existing_sqlite_file_is_left_alone_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "kandev-slack.db"
    path.touch()
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING), Database(f"sqlite:///{path}"):
        pass
    assert _mode(path) == 0o644
    assert "others can read it" in caplog.text


def test_sqlite_file_in_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        Database(f"sqlite:///{tmp_path / 'nowhere' / 'k.db'}")
    assert not (tmp_path / "nowhere").exists()


def test_sqlite_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    with Database(f"sqlite:///{path}") as store, store.sql.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 10_000


def test_each_sqlite_connection_keeps_a_small_page_cache(tmp_path: Path) -> None:
    """Five pooled connections at SQLite's default 2 MB each held 10 MB of the bot's memory."""
    with Database(f"sqlite:///{tmp_path / 'k.db'}") as store, store.sql.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA cache_size").scalar() == -SQLITE_CACHE_KIB
    assert SQLITE_CACHE_KIB <= 1024


def test_in_memory_sqlite_is_shared_by_threads() -> None:
    with Database("sqlite://") as store:
        results: list[bool] = []
        threads = [
            threading.Thread(target=lambda: results.append(record_card(store, "p1")))
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results) == [False] * 7 + [True]
        assert store.cards.count() == 1


@pytest.mark.postgres
@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_plain_postgres_urls_open_a_store(postgres_url: str, scheme: str) -> None:
    plain = scheme + postgres_url.removeprefix("postgresql+psycopg")
    with Database(plain) as store:
        assert store.url.get_backend_name() == "postgresql"
        assert store.url.drivername == "postgresql+psycopg"
        assert store.ping()
        assert record_card(store, "p1")
