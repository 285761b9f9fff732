"""Reliability tests: inject one fault, assert nothing was lost or duplicated, record it.

Fixtures
- ``reliability``: ``reliability.record(fault=..., survived=..., lost=..., duplicates=...,
  guarantee=N)`` (see recorder.py). Optional marker ``@pytest.mark.fault("name", guarantee=N)``
  names the fault of a test that fails before it records anything.

- ``kandev_proxy``: a KandevProxy in front of the shared ``kandev`` (counts answer calls per
  bundle; can hold or drop one); run the bot with ``KANDEV_URL=kandev_proxy.base_url`` and
  ``KANDEV_HINTS=off``.
- ``pg_url``: a PostgreSQL URL whose search_path is a fresh schema, dropped afterwards (the
  test is skipped when PostgreSQL is unreachable, except on CI).
- ``bot_factory`` (from tests/e2e): the bot as a process.

At the end of the run a "Reliability summary" table is printed (summary.py, a plugin that
tests/conftest.py registers, so it works with pytest-xdist too).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.e2e.reliability.recorder import Reliability
from tests.e2e.reliability.summary import recorded
from tests.kit.harness import PG_ADMIN, KandevProxy, KandevServer

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"


@pytest.fixture
def reliability(request: pytest.FixtureRequest) -> Reliability:
    return Reliability(recorded(request.config), request.node)


@pytest.fixture
def kandev_proxy(kandev: KandevServer) -> Iterator[KandevProxy]:
    kandev.start()  # a no-op unless an earlier test left the shared server stopped
    proxy = KandevProxy(kandev.base_url).start()
    yield proxy
    proxy.close()


@pytest.fixture
def pg_url() -> Iterator[str]:
    """DATABASE_URL of a fresh PostgreSQL schema (several bot processes may share it)."""
    schema = f"kandev_slack_rel_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"PostgreSQL unreachable on CI: {exc}", pytrace=False)
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    with admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield PG_URL.format(schema=schema)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
