"""`kandev-slack check` against the real Kandev runtime (with and without auth)."""

from __future__ import annotations

import pytest

from kandev_slack import cli
from tests.unit.commands.slack_stub import SlackStub, running

BOT = "xoxb-1-2-bot-token-never-printed"
SIGNING = "signing-secret-never-printed"


@pytest.fixture
def slack():
    stub = SlackStub(bot_token=BOT, app_token="xapp-unused")
    stub.add_channel("C0AGENTS", "agents")
    stub.add_channel("C0PLAT", "platform")
    with running(stub):
        yield stub


def check(monkeypatch, capsys, env: dict[str, str | None]) -> tuple[int, list[str], str]:
    for name in ("SLACK_APP_TOKEN", "KANDEV_TOKEN", "KANDEV_SLACK_CONFIG", "KANDEV_PUBLIC_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        if value is not None:
            monkeypatch.setenv(name, value)
    code = cli.main(["check"])
    out, err = capsys.readouterr()
    return code, out.splitlines(), out + err


def base_env(slack: SlackStub, url: str) -> dict[str, str | None]:
    return {
        "SLACK_BOT_TOKEN": BOT,
        "SLACK_SIGNING_SECRET": SIGNING,
        "SLACK_API_URL": slack.url,
        "KANDEV_SLACK_CHANNEL": "C0AGENTS",
        "KANDEV_URL": url,
    }


def test_check_against_real_kandev_is_all_ok(kandev, slack, monkeypatch, capsys, tmp_path):
    kandev.start()  # a no-op unless an earlier test left the shared server stopped
    routes = tmp_path / "routes.toml"
    routes.write_text(f'[[route]]\nworkspace = "{kandev.workspace_id}"\nchannel = "C0PLAT"\n')
    env = {**base_env(slack, kandev.base_url), "KANDEV_SLACK_CONFIG": str(routes)}
    code, lines, _ = check(monkeypatch, capsys, env)
    assert code == 0, lines
    assert lines[0] == f"ok   kandev reachable         {kandev.base_url}"
    assert "ok   kandev auth              no token needed (auth is off)" in lines
    assert "ok   kandev version           v0.95.1" in lines
    assert "ok   routing                  1 route(s) match Kandev workspaces" in lines
    assert "ok   slack channel C0PLAT     #platform: @kandev is a member and can post" in lines
    assert lines[-1] == "all checks passed"


def test_check_names_the_route_of_an_unknown_workspace(
    kandev, slack, monkeypatch, capsys, tmp_path
):
    kandev.start()
    routes = tmp_path / "routes.toml"
    routes.write_text('[defaults]\nchannel = "C0AGENTS"\n\n[[route]]\nworkspace = "Nowhere"\n')
    env = {**base_env(slack, kandev.base_url), "KANDEV_SLACK_CONFIG": str(routes)}
    code, lines, _ = check(monkeypatch, capsys, env)
    assert code == 1
    [routing] = [line for line in lines if line.startswith("FAIL routing")]
    assert f"{routes}, line 4: workspace 'Nowhere' is not a Kandev workspace name or id" in routing


def test_check_without_token_on_auth_kandev_says_401(kandev_auth, slack, monkeypatch, capsys):
    code, lines, _ = check(monkeypatch, capsys, base_env(slack, kandev_auth.base_url))
    assert code == 1
    [auth] = [line for line in lines if "kandev auth" in line]
    assert auth.startswith(
        "FAIL kandev auth              KANDEV_TOKEN missing or invalid (Kandev answered 401; "
        "no KANDEV_TOKEN is set)"
    )


def test_check_with_token_on_auth_kandev(kandev_auth, slack, monkeypatch, capsys):
    env = {**base_env(slack, kandev_auth.base_url), "KANDEV_TOKEN": kandev_auth.token}
    code, lines, output = check(monkeypatch, capsys, env)
    assert code == 0, lines
    assert "ok   kandev auth              KANDEV_TOKEN accepted" in lines
    assert kandev_auth.token not in output and BOT not in output and SIGNING not in output


def test_check_with_a_wrong_token_on_auth_kandev(kandev_auth, slack, monkeypatch, capsys):
    wrong = "kandev_pat_wrong_never_printed"
    env = {**base_env(slack, kandev_auth.base_url), "KANDEV_TOKEN": wrong}
    code, lines, output = check(monkeypatch, capsys, env)
    assert code == 1
    assert any(
        "KANDEV_TOKEN missing or invalid" in line and "the token set was refused" in line
        for line in lines
    )
    assert wrong not in output


def test_check_names_a_routed_workspace_the_bots_account_cannot_see(
    kandev_people, slack, monkeypatch, capsys, tmp_path
):
    """With auth on, Kandev lists only the workspaces the bot's account is a member of: a route
    naming Dan's private workspace says whose account its owner must add (issue 32)."""
    cast = kandev_people
    cast.server.start()
    routes = tmp_path / "routes.toml"
    routes.write_text(
        '[defaults]\nchannel = "C0AGENTS"\n\n'
        f'[[route]]\nworkspace = "{cast.dan_ws}"\nchannel = "C0PLAT"\n\n'
        f'[[route]]\nworkspace = "{cast.eve_ws}"\nchannel = "C0PLAT"\n'
    )
    env = {
        **base_env(slack, cast.server.base_url),
        "KANDEV_SLACK_CONFIG": str(routes),
        "KANDEV_TOKEN": cast.server.token,
    }
    code, lines, out = check(monkeypatch, capsys, env)
    assert code == 1
    [routing] = [line for line in lines if line.startswith("FAIL routing")]
    bot = f"{cast.bot.display_name} ({cast.bot.email})" if cast.bot.display_name else cast.bot.email
    assert (
        f"{routes}, line 4: workspace '{cast.dan_ws}' is not one the bot's Kandev account can "
        "see (it sees: "
    ) in routing
    assert f"its owner must add {bot} as a member; viewer is enough" in routing
    assert "line 8" not in routing  # Eve's: the bot is a viewer there (the only FAIL: Dan's)
    assert cast.server.token not in out
