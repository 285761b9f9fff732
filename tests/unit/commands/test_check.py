"""`kandev-slack check`: one line per finding, exit 0/1, never a token in the output."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kandev_slack import cli
from kandev_slack.commands.check import kandev_findings, run_checks, waiting_findings
from kandev_slack.commands.check_slack import slack_findings
from kandev_slack.commands.findings import Finding
from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.config.settings import load_settings
from kandev_slack.kandev.client import KandevClient
from tests.kit.factories import make_bundle
from tests.kit.fakes import FakeKandev
from tests.unit.commands.slack_stub import SlackStub, running

BOT = "xoxb-1-2-bot-token-never-printed"
APP = "xapp-1-A0-3-app-token-never-printed"
SIGNING = "signing-secret-never-printed"
KANDEV_TOKEN = "kandev_pat_never_printed"
SECRETS = (BOT, APP, SIGNING, KANDEV_TOKEN)
REPO = Path(__file__).resolve().parents[3]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def slack():
    stub = SlackStub(bot_token=BOT, app_token=APP)
    stub.add_channel("C0AGENTS", "agents")
    with running(stub):
        yield stub


def env_for(slack: SlackStub, **overrides: str) -> dict[str, str]:
    env = {
        "SLACK_BOT_TOKEN": BOT,
        "SLACK_SIGNING_SECRET": SIGNING,
        "SLACK_API_URL": slack.url,
        "KANDEV_SLACK_CHANNEL": "C0AGENTS",
        "KANDEV_URL": f"http://127.0.0.1:{closed_port()}",
        "KANDEV_TOKEN": KANDEV_TOKEN,
    }
    env.update(overrides)
    return {k: v for k, v in env.items() if v is not None}


def by_name(findings: list[Finding]) -> dict[str, Finding]:
    return {f.name: f for f in findings}


# ---- through the command ------------------------------------------------------------------


def test_check_reports_unreachable_kandev_and_good_slack(slack, monkeypatch, capsys) -> None:
    env = env_for(slack, SLACK_APP_TOKEN=APP)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = cli.main(["check"])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("FAIL kandev reachable")
    assert env["KANDEV_URL"] in lines[0] and "Connection refused" in lines[0]
    assert "ok   slack auth               team Acme (T0ACME), bot @kandev (U0BOT)" in lines
    assert any(line.startswith("ok   slack app token") for line in lines)
    assert "ok   slack socket mode        apps.connections.open works with SLACK_APP_TOKEN" in lines
    assert "ok   slack channel C0AGENTS   #agents: @kandev is a member and can post" in lines
    assert lines[-1] == f"1 of {len(lines) - 1} checks failed"
    for secret in SECRETS:
        assert secret not in out and secret not in err
    assert ("apps.connections.open", APP) in slack.calls


def test_check_refused_token_fails_without_printing_it(slack, monkeypatch, capsys) -> None:
    wrong = "xoxb-9-9-wrong-token-never-printed"
    for name, value in env_for(slack, SLACK_BOT_TOKEN=wrong).items():
        monkeypatch.setenv(name, value)
    assert cli.main(["check", "--http"]) == 1
    out, err = capsys.readouterr()
    assert (
        "FAIL slack auth               Slack refused SLACK_BOT_TOKEN: invalid_auth; copy the Bot "
        "User OAuth Token (xoxb-…) again into SLACK_BOT_TOKEN"
    ) in out.splitlines()
    assert wrong not in out + err and KANDEV_TOKEN not in out + err


def test_config_problems_exit_2_without_traceback(tmp_path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "SLACK_BOT_TOKEN": APP,
        "SLACK_APP_TOKEN": BOT,
        "PORT": "eighty",
        "KANDEV_URL": "localhost",
    }
    result = subprocess.run(
        [sys.executable, "-m", "kandev_slack.cli", "check"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    # No check could run; the problems are the failures, counted as --json counts them.
    assert result.stdout == "5 of 5 checks failed\n"
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "kandev-slack: configuration problems:",
        "  SLACK_BOT_TOKEN looks like an app-level token (xapp-…); put it in SLACK_APP_TOKEN",
        "  SLACK_APP_TOKEN looks like a bot token (xoxb-…); put it in SLACK_BOT_TOKEN",
        "  KANDEV_URL is not an http(s) URL ('localhost'); write it like http://localhost:38429",
        "  PORT must be a TCP port number from 1 to 65535 (got 'eighty')",
        "  KANDEV_SLACK_CHANNEL is not set and no KANDEV_SLACK_CONFIG: set KANDEV_SLACK_CHANNEL "
        "to the id of the channel for the question cards (C…, from the channel's details)",
    ]
    for secret in (APP, BOT):
        assert secret not in result.stderr


def test_run_with_config_problems_exits_2(monkeypatch, capsys) -> None:
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
    monkeypatch.setenv("KANDEV_SLACK_CHANNEL", "C0AGENTS")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING)
    assert cli.main(["run", "--socket"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "kandev-slack: configuration problems:"
    assert err[1].startswith("  SLACK_BOT_TOKEN is not set")
    assert err[2].startswith("  SLACK_APP_TOKEN is not set; Socket Mode (--socket) needs")


def test_http_and_socket_flags_exclude_each_other(capsys) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["run", "--http", "--socket"])
    assert caught.value.code == 2


# ---- Slack findings -----------------------------------------------------------------------


def test_channel_problems(slack) -> None:
    slack.add_channel("C0OUT", "outside", is_member=False)
    slack.add_channel("G0OLD", "old", is_private=True, is_archived=True, is_member=True)
    settings = load_settings(env_for(slack, KANDEV_SLACK_CHANNEL="C0OUT"))
    found = by_name(slack_findings(settings, "http"))
    assert found["slack channel C0OUT"] == Finding(
        False, "slack channel C0OUT", "#outside: @kandev is not a member; /invite @kandev there"
    )
    settings = load_settings(env_for(slack, KANDEV_SLACK_CHANNEL="G0OLD"))
    found = by_name(slack_findings(settings, "http"))
    assert not found["slack channel G0OLD"].ok
    assert "#old is archived" in found["slack channel G0OLD"].detail
    settings = load_settings(env_for(slack, KANDEV_SLACK_CHANNEL="C0GONE"))
    found = by_name(slack_findings(settings, "http"))
    assert not found["slack channel C0GONE"].ok
    assert found["slack channel C0GONE"].detail.startswith("channel not found")


def test_every_routed_channel_is_checked(slack, tmp_path) -> None:
    slack.add_channel("C0PLAT", "platform")
    path = tmp_path / "routes.toml"
    path.write_text('[[route]]\nworkspace = "Platform"\nchannel = "C0PLAT"\n')
    settings = load_settings(env_for(slack, KANDEV_SLACK_CONFIG=str(path)))
    found = by_name(slack_findings(settings, "http"))
    assert found["slack channel C0AGENTS"].ok and found["slack channel C0PLAT"].ok
    assert [m for m, _ in slack.calls].count("conversations.info") == 2


def test_public_channel_without_membership_is_fine_with_chat_write_public(slack) -> None:
    slack.scopes.append("chat:write.public")
    slack.add_channel("C0OUT", "outside", is_member=False)
    settings = load_settings(env_for(slack, KANDEV_SLACK_CHANNEL="C0OUT"))
    assert by_name(slack_findings(settings, "http"))["slack channel C0OUT"].ok


def test_missing_read_scope_is_a_warning_not_a_failure(slack) -> None:
    slack.scopes.remove("channels:read")
    settings = load_settings(env_for(slack))
    finding = by_name(slack_findings(settings, "http"))["slack channel C0AGENTS"]
    assert finding.ok and finding.warning and finding.status == "warn"
    assert "needs scope channels:read" in finding.detail


def test_missing_chat_write_scope_fails(slack) -> None:
    slack.scopes.remove("chat:write")
    settings = load_settings(env_for(slack))
    assert not by_name(slack_findings(settings, "http"))["slack scopes"].ok


def test_refused_app_token_in_socket_mode(slack) -> None:
    other = "xapp-1-A0-9-revoked-app-token"
    settings = load_settings(env_for(slack, SLACK_APP_TOKEN=other))
    finding = by_name(slack_findings(settings, "socket"))["slack socket mode"]
    assert finding == Finding(
        False,
        "slack socket mode",
        "apps.connections.open refused: invalid_auth; create a new app-level token and put it "
        "in SLACK_APP_TOKEN",
    )


def test_http_mode_does_not_open_a_socket(slack) -> None:
    settings = load_settings(env_for(slack, SLACK_APP_TOKEN=APP), "http")
    found = by_name(slack_findings(settings, "http"))
    assert found["slack mode"].detail == "HTTP mode (--http): SLACK_APP_TOKEN is unused"
    assert "apps.connections.open" not in [m for m, _ in slack.calls]


def test_unreachable_slack(monkeypatch) -> None:
    url = f"http://127.0.0.1:{closed_port()}/api/"
    settings = load_settings(
        {
            "SLACK_BOT_TOKEN": BOT,
            "SLACK_SIGNING_SECRET": SIGNING,
            "SLACK_API_URL": url,
            "KANDEV_SLACK_CHANNEL": "C0AGENTS",
        }
    )
    [finding] = slack_findings(settings, "http")
    assert not finding.ok and finding.detail.startswith(f"cannot reach SLACK_API_URL {url}")


# ---- Kandev findings through the real client over a scripted HTTP transport ----------------


def scripted_kandev(routes: dict[str, httpx.Response]) -> KandevClient:
    def handle(request: httpx.Request) -> httpx.Response:
        return routes.get(request.url.path, httpx.Response(404, json={"error": "not found"}))

    return KandevClient(
        "http://kandev.test", transport=httpx.MockTransport(handle), retry_attempts=1
    )


def test_kandev_401_says_the_token_is_missing(slack) -> None:
    kandev = scripted_kandev(
        {
            "/health": httpx.Response(200, json={"status": "ok", "version": "v0.95.1"}),
            "/api/v1/workspaces": httpx.Response(401, json={"error": "authentication required"}),
        }
    )
    settings = load_settings(env_for(slack, KANDEV_TOKEN=None))
    found = kandev_findings(kandev, settings)
    assert [f.status for f in found] == ["ok", "ok", "FAIL"]
    assert found[2].name == "kandev auth"
    assert found[2].detail.startswith(
        "KANDEV_TOKEN missing or invalid (Kandev answered 401; no KANDEV_TOKEN is set)"
    )


def test_kandev_still_starting(slack) -> None:
    kandev = scripted_kandev(
        {
            "/health": httpx.Response(200, json={"status": "ok", "version": "v0.95.1"}),
            "/api/v1/workspaces": httpx.Response(503, json={"status": "starting"}),
        }
    )
    found = kandev_findings(kandev, load_settings(env_for(slack)))
    assert [(f.name, f.ok) for f in found] == [("kandev reachable", True), ("kandev ready", False)]


def test_run_checks_redacts_secrets_from_every_detail(slack) -> None:
    echo = f"upstream said: {KANDEV_TOKEN}"
    kandev = scripted_kandev(
        {
            "/health": httpx.Response(200, json={"status": "ok"}),
            "/api/v1/workspaces": httpx.Response(418, text=echo),
        }
    )
    findings = run_checks(load_settings(env_for(slack)), "http", kandev)
    text = "\n".join(f.line() for f in findings)
    assert "upstream said: [redacted]" in text
    for secret in SECRETS:
        assert secret not in text
    assert json.dumps([f.detail for f in findings]).count("[redacted]") == 1


def test_check_says_where_each_waiting_question_goes_and_which_cannot_be_routed() -> None:
    kandev = FakeKandev()
    kandev.add(make_bundle(pending_id="p1", task_id="t1"), workspace_id="ws-1")
    kandev.add(
        make_bundle(pending_id="p2", task_id="t2"), workspace_id="ws-2", workspace_name="Ops"
    )
    kandev.add(make_bundle(pending_id="p3", task_id="t3"), workspace_id="ws-1")
    kandev.tasks["t3"] = kandev.tasks["t3"].model_copy(update={"workspace_id": "ws-gone"})
    rule = RouteRule(workspace="ws-1", channel="C0PLATFORM", answerers=frozenset(), line=1)
    routing = Routing(rules=(rule,))
    found = waiting_findings(kandev, routing)
    assert [(f.name, f.ok) for f in found] == [("waiting questions", True), ("unroutable", False)]
    assert found[0].detail == "3 waiting: 1 to C0PLATFORM"
    assert found[1].detail == (
        "2 questions cannot be routed: its workspace is not one Kandev lists to the bot (1); "
        "no channel for workspace 'Ops' (1)"
    )
    kandev.fail("list_pending")
    [broken] = waiting_findings(kandev, routing)
    assert not broken.ok and broken.detail.startswith("cannot list:")


def test_check_names_the_route_of_each_waiting_question() -> None:
    kandev = FakeKandev()
    kandev.add(
        make_bundle(pending_id="p1", task_id="t1"), workspace_id="ws-1", workspace_name="Platform"
    )
    kandev.add(
        make_bundle(pending_id="p2", task_id="t2"), workspace_id="ws-2", workspace_name="Ops"
    )
    rule = RouteRule(workspace="Platform", channel="C0PLATFORM", answerers=frozenset(), line=4)
    found = waiting_findings(kandev, Routing(rules=(rule,), source="routing.toml"), each=True)
    lines = {f.name: f for f in found}
    assert lines["question p1"].ok
    assert lines["question p1"].detail.endswith(
        "in workspace 'Platform' → C0PLATFORM ([[route]] Platform (routing.toml:4))"
    )
    assert not lines["question p2"].ok
    assert lines["question p2"].detail.endswith("not routed: no channel for workspace 'Ops'")
    with_default = Routing(rules=(rule,), default_channel="C0DEFAULT")
    found = waiting_findings(kandev, with_default, each=True)
    assert {f.name: f.detail for f in found}["question p2"].endswith(
        "→ C0DEFAULT (the default channel)"
    )


def test_partial_settings_keep_what_is_valid_and_name_what_is_not() -> None:
    from kandev_slack.config.settings import load_partial

    partial = load_partial(
        {"KANDEV_URL": "http://kandev.internal:38429", "PORT": "eighty", "METRICS_PORT": "0"}
    )
    assert partial.usable("kandev_url", "kandev_token")
    assert not partial.usable("slack_bot_token")
    assert not partial.usable("port") and not partial.usable("metrics_port")
    assert partial.settings.kandev_url == "http://kandev.internal:38429"
    assert partial.settings.port == 3000  # the default stands in for the invalid value
    assert any(p.startswith("SLACK_BOT_TOKEN is not set") for p in partial.problems)
    assert "PORT must be a TCP port number from 1 to 65535 (got 'eighty')" in partial.problems
    assert "METRICS_PORT must be a TCP port number from 1 to 65535 (got '0')" in partial.problems
    whole = load_partial(
        {
            "SLACK_BOT_TOKEN": BOT,
            "SLACK_SIGNING_SECRET": SIGNING,
            "KANDEV_SLACK_CHANNEL": "C0AGENTS",
        }
    )
    assert whole.problems == [] and whole.invalid == frozenset()


def test_escalation_targets_and_direct_messages_are_checked(slack, tmp_path) -> None:
    slack.add_channel("C0LEADS", "leads", is_member=False)
    slack.users.add("U0LEAD")
    path = tmp_path / "routes.toml"
    path.write_text(
        '[defaults]\nescalate_after = "1h"\nescalate_to = "C0LEADS"\n\n'
        '[[route]]\nworkspace = "Platform"\nescalate_to = "U0LEAD"\n\n'
        '[[route]]\nworkspace = "Mobile"\nescalate_to = "U0GONE"\n'
    )
    settings = load_settings(env_for(slack, KANDEV_SLACK_CONFIG=str(path)))
    found = by_name(slack_findings(settings, "http"))
    assert found["slack channel C0LEADS"] == Finding(
        False, "slack channel C0LEADS", "#leads: @kandev is not a member; /invite @kandev there"
    )
    # Without im:write no DM can be opened: a failure, since escalation goes to people.
    assert not found["slack escalation U0LEAD"].ok
    assert "missing_scope" in found["slack escalation U0LEAD"].detail
    assert not found["slack direct messages"].ok

    slack.scopes.append("im:write")
    found = by_name(slack_findings(settings, "http"))
    assert found["slack escalation U0LEAD"] == Finding(
        True, "slack escalation U0LEAD", "can open a DM with U0LEAD"
    )
    assert not found["slack escalation U0GONE"].ok
    assert "user_not_found" in found["slack escalation U0GONE"].detail
    assert found["slack direct messages"].ok and not found["slack direct messages"].warning


def test_without_im_write_dm_cards_are_a_warning(slack) -> None:
    found = by_name(slack_findings(load_settings(env_for(slack)), "http"))
    assert found["slack direct messages"].warning and found["slack direct messages"].ok
    assert "im:write" in found["slack direct messages"].detail


def test_thread_replies_name_the_missing_scopes_and_what_only_the_app_settings_show(slack) -> None:
    found = by_name(slack_findings(load_settings(env_for(slack)), "http"))
    replies = found["slack thread replies"]
    assert replies.ok and replies.warning  # a warning: events and the Messages tab unreadable
    assert "im:history" in replies.detail and "message.im" in replies.detail
    slack.scopes.extend(["channels:history", "groups:history", "im:history"])
    replies = by_name(slack_findings(load_settings(env_for(slack)), "http"))["slack thread replies"]
    assert "lacks" not in replies.detail
    assert "not verifiable with a bot token" in replies.detail and "Messages Tab" in replies.detail


def test_without_users_read_routes_without_answerers_are_a_warning(slack, tmp_path) -> None:
    found = by_name(slack_findings(load_settings(env_for(slack)), "http"))
    people = found["slack people"]
    assert people.ok and people.warning and "users:read" in people.detail
    assert "every answer is refused" in people.detail

    path = tmp_path / "routes.toml"
    path.write_text('[defaults]\nanswerers = ["U0ANA"]\n')
    named = by_name(
        slack_findings(load_settings(env_for(slack, KANDEV_SLACK_CONFIG=str(path))), "http")
    )
    assert named["slack people"].ok and not named["slack people"].warning

    slack.scopes.append("users:read")
    found = by_name(slack_findings(load_settings(env_for(slack)), "http"))
    assert found["slack people"] == Finding(
        True, "slack people", "can read a person's organisation (users:read)"
    )
