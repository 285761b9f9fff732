"""manifest.yml installs the app as the code expects it, within Slack's manifest limits."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
import yaml
from slack_sdk import WebClient

from kandev_slack.cards.ids import COMMAND, SHORTCUT_REJECT

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "manifest.yml"
BOT = ROOT / "kandev_slack"


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
    assert settings["event_subscriptions"]["bot_events"] == [
        "app_home_opened",
        "message.channels",
        "message.groups",
        "message.im",
    ]
    home = manifest["features"]["app_home"]
    assert home["home_tab_enabled"] is True
    # replies in a DM card's thread need the Messages tab, not read-only
    assert home["messages_tab_enabled"] is True
    assert home["messages_tab_read_only_enabled"] is False


def test_scopes_cover_every_web_api_method_the_bot_calls(manifest):
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    # chat.postMessage/update/postEphemeral; commands + shortcuts; usergroups.users.list
    # (answerers by group); conversations.history/info (crash recovery, `check`).
    assert {"chat:write", "commands", "usergroups:read"} <= scopes
    assert {"channels:history", "groups:history", "channels:read", "groups:read"} <= scopes


#: The scope each message event subscription needs (thread replies answer a card).
EVENT_SCOPES = {
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.im": "im:history",
}


#: The bot-token scopes each Slack Web API method needs, for the conversations cards go to
#: (public and private channels; direct-message routes are refused at start-up).
SCOPES_NEEDED: dict[str, frozenset[str]] = {
    "chat.postMessage": frozenset({"chat:write"}),
    "chat.update": frozenset({"chat:write"}),
    "chat.delete": frozenset({"chat:write"}),  # a duplicate a lease-less replica posted
    "chat.postEphemeral": frozenset({"chat:write"}),
    "chat.getPermalink": frozenset(),
    "conversations.history": frozenset({"channels:history", "groups:history"}),
    "conversations.replies": frozenset({"channels:history", "groups:history"}),
    "conversations.open": frozenset({"im:write"}),  # DM cards (escalation to a person)
    "conversations.info": frozenset({"channels:read", "groups:read"}),
    "conversations.members": frozenset({"channels:read", "groups:read"}),
    "usergroups.users.list": frozenset({"usergroups:read"}),
    "users.info": frozenset({"users:read"}),  # names in thread replies; organisations
    "views.open": frozenset(),
    "views.push": frozenset(),
    "views.update": frozenset(),
    "views.publish": frozenset(),
    "auth.test": frozenset(),
    "apps.connections.open": frozenset(),  # the app-level token's connections:write
}


def _web_client_methods() -> dict[str, str]:
    """slack_sdk's WebClient method name → the Web API method it calls (``chat_update`` → …)."""
    found = {}
    for name, function in inspect.getmembers(WebClient, inspect.isfunction):
        match = re.search(r'api_call\(\s*"([\w.]+)"', inspect.getsource(function))
        if match and not name.startswith("_"):
            found[name] = match.group(1)
    return found


def web_api_methods_called(root: Path = BOT) -> dict[str, set[str]]:
    """Every Web API method the bot's code calls → where: ``_call("chat.update", …)`` in the
    Slack gateway, ``api_call(…)``, and WebClient's typed methods (``client.auth_test()``)."""
    typed = _web_client_methods()
    called: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if {"kits", "preview"} & set(path.relative_to(root).parts):
            continue  # the kits fake Slack; the preview runs the bot on them
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            gateway_call = node.func.attr == "_call" and "slack_api" in path.parts
            if gateway_call or node.func.attr == "api_call":
                first = node.args[0] if node.args else None
                assert isinstance(first, ast.Constant) and isinstance(first.value, str), (
                    f"{where}: name the Slack method literally so the scopes can be checked"
                )
                called.setdefault(first.value, set()).add(where)
            elif node.func.attr in typed:
                called.setdefault(typed[node.func.attr], set()).add(where)
    return called


def test_the_methods_the_bot_calls_are_found():
    called = web_api_methods_called()
    assert {"chat.postMessage", "chat.update", "views.open", "auth.test"} <= set(called)
    assert all(where for where in called.values())


def test_scopes_are_exactly_those_the_bot_needs(manifest):
    called = web_api_methods_called()
    unknown = sorted(set(called) - set(SCOPES_NEEDED))
    assert not unknown, f"add the scopes these Slack methods need to SCOPES_NEEDED: {unknown}"
    needed = set().union(*(SCOPES_NEEDED[method] for method in called))
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    needed |= {EVENT_SCOPES[event] for event in events if event in EVENT_SCOPES}
    features = manifest["features"]
    if features.get("slash_commands") or features.get("shortcuts"):
        needed.add("commands")
    declared = manifest["oauth_config"]["scopes"]["bot"]
    assert len(declared) == len(set(declared)), "a scope is listed twice"
    assert sorted(declared) == sorted(needed), (
        f"missing: {sorted(needed - set(declared))}, unused: {sorted(set(declared) - needed)}"
    )


def test_a_new_slack_call_is_noticed(tmp_path):
    package = tmp_path / "bot"
    (package / "slack_api").mkdir(parents=True)
    (package / "slack_api" / "dm.py").write_text(
        "def tell(client, gateway, user):\n"
        "    channel = client.conversations_open(users=user)['channel']['id']\n"
        "    gateway._call('reactions.add', channel=channel, name='eyes')\n"
    )
    assert set(web_api_methods_called(package)) == {"conversations.open", "reactions.add"}
