"""The preview does not start beside a real Slack app's secrets, unless told to."""

from __future__ import annotations

from kandev_slack.core.exitcodes import EXIT_CONFIG
from kandev_slack.preview.cli import main_preview
from kandev_slack.preview.guard import refusal, slack_secrets_in


def test_the_secrets_of_a_slack_app_are_found() -> None:
    env = {
        "SLACK_BOT_TOKEN": "xoxb-1-2-3",
        "SLACK_SIGNING_SECRET": "abc",
        "SLACK_OTHER": "xapp-1-A-2-x",
        "SLACK_API_URL": "https://slack.com/api/",
        "SLACK_APP_TOKEN": "",
        "PATH": "xoxb-not-slack",
    }
    assert slack_secrets_in(env) == ["SLACK_BOT_TOKEN", "SLACK_OTHER", "SLACK_SIGNING_SECRET"]


def test_a_clean_environment_may_start() -> None:
    assert refusal({"KANDEV_URL": "http://localhost:38429"}, allow_slack_env=False) is None


def test_the_refusal_names_the_variables_and_the_way_out() -> None:
    said = refusal({"SLACK_BOT_TOKEN": "xoxb-1"}, allow_slack_env=False)
    assert said is not None
    assert "SLACK_BOT_TOKEN is set" in said and "--allow-slack-env" in said
    assert refusal({"SLACK_BOT_TOKEN": "xoxb-1"}, allow_slack_env=True) is None


def test_the_command_refuses_before_starting_anything(capsys) -> None:
    code = main_preview(
        0, with_kandev=True, allow_slack_env=False, env={"SLACK_APP_TOKEN": "xapp-1-A-1-x"}
    )
    assert code == EXIT_CONFIG
    assert "SLACK_APP_TOKEN is set" in capsys.readouterr().err


def test_kandev_slack_preview_refuses_with_a_token_set(monkeypatch, capsys) -> None:
    from kandev_slack.cli import main

    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-2-real")
    assert main(["preview", "--port", "0", "--with-kandev"]) == EXIT_CONFIG
    assert "SLACK_BOT_TOKEN is set" in capsys.readouterr().err
