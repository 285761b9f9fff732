"""Guarantee 8 (safe reasons): /healthz reasons are short sentences of the bot's own, never an
exception's text with a URL holding credentials, SQL or a traceback."""

from __future__ import annotations

import traceback

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from kandev_slack.kandev.errors import KandevUnavailable
from kandev_slack.ops.health import MAX_REASON_CHARS, Health


def _sql_error() -> OperationalError:
    engine = create_engine("sqlite://")
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT secret_column FROM no_such_table"))
    except OperationalError as exc:
        return exc
    raise AssertionError("the query worked")


def _http_error() -> httpx.HTTPStatusError:
    request = httpx.Request("GET", "https://ops:Tr0ub4dor@kandev.internal/api/v1/tasks")
    try:
        httpx.Response(502, request=request).raise_for_status()
    except httpx.HTTPStatusError as exc:
        return exc
    raise AssertionError("no error")


def _reasons(health: Health) -> str:
    return "\n".join(health.report().as_json()["reasons"])


def test_a_failure_is_named_by_its_type_never_its_text() -> None:
    health = Health()
    health.failure("sync", "sync cycle failed", _sql_error())
    health.failure("kandev", "unreachable", _http_error())
    assert health.report().reasons == (
        "kandev: unreachable (HTTPStatusError)",
        "sync: sync cycle failed (OperationalError)",
    )


@pytest.mark.parametrize("make", [_sql_error, _http_error])
def test_exception_text_passed_as_a_reason_is_made_safe(make) -> None:
    error = make()
    health = Health()
    health.problem("db", f"{error}\n{''.join(traceback.format_exception(error))}")
    shown = _reasons(health)
    for leak in ("SELECT", "secret_column", "Tr0ub4dor", "ops:", "Traceback", "\n"):
        assert leak not in shown, (leak, shown)
    assert len(shown) <= len("db: ") + MAX_REASON_CHARS


def test_a_long_reason_is_cut_and_a_clean_one_is_kept_as_it_is() -> None:
    health = Health()
    health.problem("routing", "no channel for workspace 'Platform': add a [[route]]")
    health.problem("slack", "chat.update failed in C0Q: channel_not_found; invite the app " * 10)
    reasons = health.report().reasons
    assert reasons[0] == "routing: no channel for workspace 'Platform': add a [[route]]"
    assert reasons[1].startswith("slack: chat.update failed in C0Q") and reasons[1].endswith("…")
    assert len(reasons[1]) == len("slack: ") + MAX_REASON_CHARS


def test_kandev_unreachable_with_credentials_in_its_url() -> None:
    health = Health()
    error = KandevUnavailable("Kandev at http://u:pw0rd@kandev:1 is unavailable (GET /x)")
    health.problem("kandev", f"unreachable: {error}")
    assert "pw0rd" not in _reasons(health) and "u:" not in _reasons(health)
