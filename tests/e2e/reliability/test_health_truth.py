"""``/healthz`` tells the truth and recovers: a problem is reported while its cause lasts and
clears once it is gone (a failed sync cycle, the database), with short, safe reasons."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from kandev_slack.ops.health import Health
from tests.e2e.helpers import MARGIN_S, POLL_S, start_bot
from tests.kit.harness import admin_connection

MCP = r"^/mcp$"


def _wait_health(bot, want_ok: bool, timeout: float) -> tuple[int, dict]:
    deadline = time.monotonic() + timeout
    while True:
        code, body = bot.health()
        if (code == 200) == want_ok:
            return code, body
        assert time.monotonic() < deadline, (code, body)
        time.sleep(0.1)


def test_health_checks_run_at_each_report_and_clear_with_their_cause() -> None:
    health = Health()
    answers = iter(["does not answer", None])
    health.watch("database", lambda: next(answers))
    assert health.report().reasons == ("database: does not answer",)
    assert health.report().ok
    health.watch("database", lambda: 1 / 0)
    assert health.report().reasons == ("database: check failed (ZeroDivisionError)",)


@pytest.mark.fault("a failed sync cycle, then Kandev answers again", guarantee=8)
def test_a_failed_sync_cycle_degrades_health_until_the_next_good_one(
    bot_factory, kandev_proxy, reliability
):
    bot = start_bot(bot_factory, KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off")
    _wait_health(bot, True, POLL_S + MARGIN_S)
    # Kandev's MCP endpoint answers garbage: the cycle fails (not an outage: a bad reply).
    kandev_proxy.fail_path(MCP, 200, b"<html>oops</html>", "text/html")
    code, body = _wait_health(bot, False, 3 * POLL_S + MARGIN_S)
    reasons = " ".join(body["reasons"])
    assert "oops" not in reasons and "<html>" not in reasons and "http://" not in reasons, body
    kandev_proxy.heal()
    code, body = _wait_health(bot, True, 3 * POLL_S + MARGIN_S)
    assert body["reasons"] == [], body
    reliability.record(
        "a failed sync cycle, then Kandev answers again",
        guarantee=8,
        survived=True,
        lost=0,
        duplicates=0,
        detail="degraded while the replies were bad, ok at the next good cycle",
    )


@pytest.fixture
def own_database() -> Iterator[tuple[str, str]]:
    """(DATABASE_URL, name) of a PostgreSQL database of this test's own (it refuses and allows
    connections at will), dropped afterwards."""
    name = f"kandev_slack_health_{uuid.uuid4().hex[:10]}"
    with admin_connection() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", name
        finally:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')


def _database_reachable(name: str, allowed: bool) -> None:
    with admin_connection() as admin:
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(allowed).lower()}')
        if not allowed:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )


@pytest.mark.postgres
@pytest.mark.fault("the database stops answering, then comes back", guarantee=8)
def test_health_reports_the_database_while_it_does_not_answer(
    bot_factory, own_database, reliability
):
    url, name = own_database
    bot = start_bot(bot_factory, db_url=url)
    _wait_health(bot, True, POLL_S + MARGIN_S)
    _database_reachable(name, False)
    code, body = _wait_health(bot, False, 30.0)
    assert any(r.startswith("database: ") for r in body["reasons"]), body
    assert not any("postgresql" in r or "127.0.0.1" in r for r in body["reasons"]), body
    _database_reachable(name, True)
    code, body = _wait_health(bot, True, 30.0)
    assert code == 200, body
    reliability.record(
        "the database stops answering, then comes back",
        guarantee=8,
        survived=True,
        lost=0,
        duplicates=0,
        detail="/healthz named the database while it refused connections",
    )
