"""`kandev-slack check` as a process against the real Kandev and the fake Slack: it checks
everything it can even when settings are missing, says where each waiting question goes, and
`--json` gives scripts the same report. Exit 0 only when everything needed to run is fine."""

from __future__ import annotations

import json
import subprocess

from tests.e2e.helpers import db_question
from tests.kit.harness import CHANNEL, CONSOLE_SCRIPT, bot_env


def check(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CONSOLE_SCRIPT), "check", *args], env=env, capture_output=True, text=True, timeout=90
    )


def test_check_reports_every_route_and_still_checks_kandev_without_slack_settings(
    fake_slack, kandev, seed, tmp_path
) -> None:
    bundle = seed([db_question()], title="Pick the database for check")
    env = bot_env(fake_slack, kandev, f"sqlite:///{tmp_path / 'bot.db'}")

    full = check(env, "--json")
    assert full.returncode == 0, full.stdout + full.stderr
    report = json.loads(full.stdout)
    assert report["ok"] is True and report["configuration_problems"] == []
    findings = {f["name"]: f for f in report["findings"]}
    question = findings[f"question {bundle.pending_id}"]
    assert question["ok"] and question["status"] == "ok"
    assert question["detail"].startswith("'Pick the database for check' in workspace ")
    assert question["detail"].endswith(f"→ {CHANNEL} (the default channel)")
    assert findings["slack auth"]["ok"] and findings["kandev auth"]["ok"]

    text = check(env)
    assert text.returncode == 0
    assert any(
        line.startswith(f"ok   question {bundle.pending_id}")
        and line.endswith(CHANNEL + " (the default channel)")
        for line in text.stdout.splitlines()
    ), text.stdout
    assert text.stdout.splitlines()[-1] == "all checks passed"

    # No Slack token, no channel, a bad port: Kandev is still checked, the problems are listed.
    broken = {k: v for k, v in env.items() if k not in ("SLACK_BOT_TOKEN", "KANDEV_SLACK_CHANNEL")}
    broken["PORT"] = "eighty"
    partial = check(broken, "--json")
    assert partial.returncode == 2, partial.stdout + partial.stderr
    report = json.loads(partial.stdout)
    assert report["ok"] is False
    problems = report["configuration_problems"]
    assert any(p.startswith("SLACK_BOT_TOKEN is not set") for p in problems), problems
    assert "PORT must be a TCP port number from 1 to 65535 (got 'eighty')" in problems
    assert any(p.startswith("KANDEV_SLACK_CHANNEL is not set") for p in problems), problems
    findings = {f["name"]: f for f in report["findings"]}
    assert findings["kandev reachable"]["ok"] and findings["kandev mcp"]["ok"]
    assert not findings[f"question {bundle.pending_id}"]["ok"]  # no channel to go to
    assert not any(name.startswith("slack") for name in findings)  # no token to check with
    assert report["failed"] == len(problems) + sum(not f["ok"] for f in report["findings"])

    text = check(broken)
    assert text.returncode == 2
    assert text.stderr.splitlines()[0] == "kandev-slack: configuration problems:"
    assert "  PORT must be a TCP port number from 1 to 65535 (got 'eighty')" in text.stderr
    out = text.stdout.splitlines()
    assert out[0].startswith("ok   kandev reachable")
    assert out[-1].endswith("checks failed")
    assert env["SLACK_SIGNING_SECRET"] not in text.stdout + text.stderr + partial.stdout
