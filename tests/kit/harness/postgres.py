"""The local PostgreSQL the tests use (127.0.0.1:5432, trust auth, database ``test``)."""

from __future__ import annotations

import os

import psycopg
import pytest

#: libpq DSN of an administrative connection (override with KANDEV_SLACK_TEST_POSTGRES_DSN).
PG_ADMIN = os.environ.get(
    "KANDEV_SLACK_TEST_POSTGRES_DSN", "host=127.0.0.1 port=5432 dbname=test user=postgres"
)


def admin_connection() -> psycopg.Connection:
    """An autocommit connection to PostgreSQL; fails the test on CI (where PostgreSQL must
    run) and skips it elsewhere when PostgreSQL is not there."""
    try:
        return psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"PostgreSQL unreachable on CI: {exc}", pytrace=False)
        pytest.skip(f"PostgreSQL unreachable: {exc}")
