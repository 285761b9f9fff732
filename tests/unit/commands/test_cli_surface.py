"""The command's own surface: `--version` from the installed package, a `--help` of its own
for every subcommand, and `check` counting failures the same way in text and in `--json`."""

from __future__ import annotations

import json
import socket
from importlib.metadata import version

import pytest

from kandev_slack import cli
from tests.unit.commands.slack_stub import SlackStub, running

BOT = "xoxb-1-2-bot-token-never-printed"
SIGNING = "signing-secret-never-printed"

#: Every subcommand and a phrase only its own --help says.
SUBCOMMANDS = {
    ("run",): "post the questions and approvals waiting in Kandev",
    ("check",): "where each question and approval waiting in Kandev would go",
    ("db",): "apply its schema migrations or show its state",
    ("db", "upgrade"): "print the steps applied",
    ("db", "status"): "the migrations `upgrade` would apply",
    ("preview",): "behaves like a Slack workspace",
    ("secret-key",): "which encrypts the people's own Kandev tokens in the database",
}


def help_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as caught:
        cli.main(argv)
    assert caught.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_version_is_the_installed_package_version(capsys) -> None:
    assert help_of(["--version"], capsys) == f"kandev-slack {version('kandev-slack')}"


@pytest.mark.parametrize("words", sorted(SUBCOMMANDS), ids=" ".join)
def test_each_subcommand_help_describes_that_subcommand(words, capsys) -> None:
    top = help_of(["--help"], capsys)
    text = help_of([*words, "--help"], capsys)
    assert text.startswith(f"usage: kandev-slack {' '.join(words)}")
    assert SUBCOMMANDS[words] in text
    assert SUBCOMMANDS[words] not in top
    for other, phrase in SUBCOMMANDS.items():
        if other != words and other[: len(words)] != words:
            assert phrase not in text, other


def test_secret_key_prints_one_new_key_and_how_to_rotate(capsys) -> None:
    from kandev_slack.ops.vault import Vault

    assert cli.main(["secret-key"]) == 0
    first = capsys.readouterr()
    assert cli.main(["secret-key"]) == 0
    second = capsys.readouterr()
    [key] = first.out.splitlines()
    assert first.out == f"{key}\n" and second.out != first.out
    assert repr(Vault.from_keys(key)) == "Vault(1 key)"
    said = " ".join(first.err.split())
    assert "To rotate: put the new key first, a comma, then the old ones" in said
    assert "KANDEV_SLACK_SECRET_KEY=<new>,<old>" in said
    assert key not in first.err


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_check_counts_failures_the_same_in_text_and_json(monkeypatch, capsys) -> None:
    """Two configuration problems (no channel, a bad port) and a failed check (Kandev
    unreachable): the text's last line and the JSON's ``failed`` both say 3."""
    stub = SlackStub(bot_token=BOT, app_token="xapp-1-A0-3-unused")
    with running(stub):
        monkeypatch.setenv("SLACK_BOT_TOKEN", BOT)
        monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING)
        monkeypatch.setenv("SLACK_API_URL", stub.url)
        monkeypatch.setenv("KANDEV_URL", f"http://127.0.0.1:{closed_port()}")
        monkeypatch.setenv("PORT", "eighty")
        for name in ("SLACK_APP_TOKEN", "KANDEV_SLACK_CHANNEL", "KANDEV_SLACK_CONFIG"):
            monkeypatch.delenv(name, raising=False)

        assert cli.main(["check", "--http", "--json"]) == 2
        report = json.loads(capsys.readouterr().out)
        assert cli.main(["check", "--http"]) == 2
        out = capsys.readouterr().out.splitlines()

    problems = len(report["configuration_problems"])
    failed_findings = sum(not f["ok"] for f in report["findings"])
    assert problems == 2 and failed_findings == 1, report
    assert report["failed"] == 3
    assert report["checks"] == problems + len(report["findings"])
    assert out[-1] == f"3 of {report['checks']} checks failed" == report["summary"]
