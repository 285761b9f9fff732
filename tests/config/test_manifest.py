"""manifest.yml installs the app as the code expects it, within Slack's manifest limits."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.cards.ids import COMMAND, SHORTCUT_REJECT

MANIFEST = Path(__file__).resolve().parents[2] / "manifest.yml"


@pytest.fixture(scope="module")
def manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def test_names_fit_slacks_limits(manifest):
    name = manifest["display_information"]["name"]
    assert 0 < len(name) <= 35
    assert manifest["features"]["bot_user"]["display_name"]


def test_the_slash_command_is_the_one_the_bot_listens_to(manifest):
    commands = manifest["features"]["slash_commands"]
    assert [c["command"] for c in commands] == [COMMAND]
    for command in commands:
        assert len(command["command"]) <= 32
        assert command["description"] and command["usage_hint"]
        assert "url" not in command  # Socket Mode: no request URL


def test_the_reject_shortcut_is_a_message_shortcut_with_our_callback_id(manifest):
    shortcuts = manifest["features"]["shortcuts"]
    assert [(s["callback_id"], s["type"]) for s in shortcuts] == [(SHORTCUT_REJECT, "message")]
    assert all(0 < len(s["description"]) <= 150 and s["name"] for s in shortcuts)


def test_socket_mode_interactivity_home_tab_and_events(manifest):
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is True
    assert settings["interactivity"]["is_enabled"] is True
    assert "request_url" not in settings["interactivity"]
    assert settings["event_subscriptions"]["bot_events"] == ["app_home_opened"]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True


def test_scopes_cover_every_web_api_method_the_bot_calls(manifest):
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    # chat.postMessage/update/postEphemeral; commands + shortcuts; usergroups.users.list
    # (answerers by group); conversations.history/info (crash recovery, `check`).
    assert {"chat:write", "commands", "usergroups:read"} <= scopes
    assert {"channels:history", "groups:history", "channels:read", "groups:read"} <= scopes
