"""The people linked to their Kandev account, as operators see them: the /metrics gauges
``kandev_slack_linked_people`` / ``kandev_slack_broken_links`` (read from the store at scrape
time) and ``kandev-slack check``'s line, text and ``--json`` — never a token."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from kandev_slack import cli
from kandev_slack.commands.check import links_findings
from kandev_slack.commands.findings import Finding, links_line
from kandev_slack.commands.run import metrics_state
from kandev_slack.config.settings import load_settings
from kandev_slack.ops import metrics
from kandev_slack.ops.health import Health
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from kandev_slack.store.migrations import migrate
from kandev_slack.store.sql.engine import make_engine
from kandev_slack.store.sql.url import normalize_url
from tests.unit.ops.metrics_doc import served, value

KEY, OLD_KEY = Vault.new_key(), Vault.new_key()
TOKENS = {
    "U0ANA00001": "kandev_pat_0a1b2c3d_" + "a" * 43,
    "U0BOB00002": "kandev_pat_1b2c3d4e_" + "b" * 43,
    "U0CAROL003": "kandev_pat_2c3d4e5f_" + "c" * 43,
}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env(tmp_path: Path, **overrides: str | None) -> dict[str, str]:
    values: dict[str, str | None] = {
        "SLACK_BOT_TOKEN": "xoxb-1-2-bot",
        "SLACK_SIGNING_SECRET": "signing",
        "KANDEV_SLACK_CHANNEL": "C0AGENTS",
        "KANDEV_URL": f"http://127.0.0.1:{closed_port()}",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
        "KANDEV_SLACK_SECRET_KEY": KEY,
    }
    values.update(overrides)
    return {k: v for k, v in values.items() if v is not None}


def linked_store(tmp_path: Path, keys: str = KEY) -> Database:
    """Three people linked, Carol's link broken (Kandev refused her token)."""
    store = Database(f"sqlite:///{tmp_path / 'bot.db'}", vault=Vault.from_keys(keys))
    for n, (user, token) in enumerate(TOKENS.items()):
        store.links.link(user, f"kd-{n}", f"Person {n}", f"p{n}@example.com", token)
    assert store.links.mark_broken("U0CAROL003", TOKENS["U0CAROL003"])
    return store


def test_the_line_counts_people_and_links() -> None:
    assert links_line(2, 1) == (
        "2 people linked to Kandev, 1 link broken (they are asked to reconnect)"
    )
    assert links_line(1, 0) == (
        "1 person linked to Kandev, 0 links broken (they are asked to reconnect)"
    )


# ---- /metrics -----------------------------------------------------------------------------


def test_metrics_read_the_linked_people_and_broken_links_from_the_store(tmp_path: Path) -> None:
    with linked_store(tmp_path) as store:
        state = metrics_state(store, Health())
        assert (state.linked_people, state.broken_links) == (2, 1)
        metrics.watch_state(lambda: metrics_state(store, Health()))
        text = metrics.exposition().decode()
        now = served(text)
        assert value(now, "kandev_slack_linked_people") == 2
        assert value(now, "kandev_slack_broken_links") == 1
        store.links.unlink("U0CAROL003")
        store.links.unlink("U0ANA00001")
        later = served(metrics.exposition().decode())
        assert value(later, "kandev_slack_linked_people") == 1
        assert value(later, "kandev_slack_broken_links") == 0
    assert "kandev_pat_" not in text and "aaaaaaaa" not in text


# ---- kandev-slack check -------------------------------------------------------------------


def test_check_reports_the_links_without_a_token(tmp_path: Path) -> None:
    linked_store(tmp_path).close()
    settings = load_settings(env(tmp_path))
    assert links_findings(settings) == [
        Finding(
            True,
            "kandev links",
            "2 people linked to Kandev, 1 link broken (they are asked to reconnect)",
            warning=True,  # someone is asked to reconnect
        )
    ]


def test_check_says_nothing_of_links_in_a_bot_only_set_up(tmp_path: Path) -> None:
    linked_store(tmp_path).close()
    assert links_findings(load_settings(env(tmp_path, KANDEV_SLACK_SECRET_KEY=None))) == []


def test_check_creates_no_database(tmp_path: Path) -> None:
    settings = load_settings(env(tmp_path))
    assert links_findings(settings) == [
        Finding(
            True,
            "kandev links",
            "0 people linked to Kandev, 0 links broken (they are asked to reconnect); the "
            "database does not exist yet",
        )
    ]
    assert not (tmp_path / "bot.db").exists()


def test_check_on_an_older_schema_changes_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    engine = make_engine(normalize_url(url))
    try:
        migrate(engine, "0018")
    finally:
        engine.dispose()
    [finding] = links_findings(load_settings(env(tmp_path)))
    assert finding.warning and "the database's schema is version 18" in finding.detail
    with Database(url, upgrade=False) as store:
        assert store.schema_version() == 18


def test_check_counts_the_tokens_no_key_opens(tmp_path: Path) -> None:
    linked_store(tmp_path, keys=OLD_KEY).close()  # the old key was dropped since
    found = links_findings(load_settings(env(tmp_path)))
    assert found[1] == Finding(
        True,
        "kandev tokens",
        "3 stored token(s) sealed under a key no longer in KANDEV_SLACK_SECRET_KEY: put that "
        "key back after the newest, or those people connect again",
        warning=True,
    )
    both = env(tmp_path, KANDEV_SLACK_SECRET_KEY=f"{KEY},{OLD_KEY}")
    assert len(links_findings(load_settings(both))) == 1  # the old key back: all open


def test_check_fails_when_the_database_cannot_be_read(tmp_path: Path) -> None:
    url = f"postgresql://bot:dbs3cret@127.0.0.1:{closed_port()}/kandev"
    [finding] = links_findings(load_settings(env(tmp_path, DATABASE_URL=url)))
    assert not finding.ok and finding.name == "kandev links"
    assert finding.detail.startswith("cannot read the database: ")


@pytest.mark.parametrize("as_json", [False, True])
def test_the_command_reports_links_in_text_and_json(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    as_json: bool,
) -> None:
    linked_store(tmp_path).close()
    for name in ("SLACK_APP_TOKEN", "KANDEV_SLACK_CONFIG", "KANDEV_TOKEN", "SLACK_API_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, setting in env(tmp_path, SLACK_BOT_TOKEN=None).items():
        monkeypatch.setenv(name, setting)
    assert cli.main(["check", "--http", *(["--json"] if as_json else [])]) == 2
    out, err = capsys.readouterr()
    line = "2 people linked to Kandev, 1 link broken (they are asked to reconnect)"
    if as_json:
        report = json.loads(out)
        [links] = [f for f in report["findings"] if f["name"] == "kandev links"]
        assert links == {"status": "warn", "ok": True, "name": "kandev links", "detail": line}
    else:
        assert f"warn kandev links             {line}" in out.splitlines()
    for token in TOKENS.values():
        assert token not in out + err and token[20:30] not in out + err
    assert KEY not in out + err
