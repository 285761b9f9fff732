"""`kandev-slack check`, Slack's part: the bot token (auth.test and its scopes), the app token
(Socket Mode), every configured channel and every escalation target."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from kandev_slack.commands.findings import Finding, exception_text
from kandev_slack.config.routing import USER_ID, Routing
from kandev_slack.config.settings import Mode, Settings

SLACK_TIMEOUT = 10


def _scopes(response: Any) -> set[str] | None:
    headers = {k.lower(): v for k, v in (getattr(response, "headers", None) or {}).items()}
    raw = headers.get("x-oauth-scopes")
    if raw is None:
        return None
    if isinstance(raw, list):
        raw = ",".join(raw)
    return {s.strip() for s in str(raw).split(",") if s.strip()}


def _slack_error(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        data = exc.response.data if isinstance(exc.response.data, dict) else {}
        error = data.get("error") or f"HTTP {exc.response.status_code}"
        needed = data.get("needed")
        return f"{error} (needs scope {needed})" if needed else str(error)
    return exception_text(exc)


_TOKEN_REFUSED = {
    "invalid_auth",
    "not_authed",
    "token_revoked",
    "account_inactive",
    "token_expired",
}


def slack_findings(
    settings: Settings, mode: Mode, make_client: Callable[[str], WebClient] | None = None
) -> list[Finding]:
    """auth.test with the bot token, the app token (Socket Mode), and every configured channel."""
    client_for = make_client or (
        lambda token: WebClient(token=token, base_url=settings.slack_api_url, timeout=SLACK_TIMEOUT)
    )
    bot = client_for(settings.slack_bot_token.get_secret_value())
    try:
        auth = bot.auth_test()
    except SlackApiError as exc:
        error = _slack_error(exc)
        fix = (
            "; copy the Bot User OAuth Token (xoxb-…) again into SLACK_BOT_TOKEN"
            if error in _TOKEN_REFUSED
            else ""
        )
        return [Finding(False, "slack auth", f"Slack refused SLACK_BOT_TOKEN: {error}{fix}")]
    except (SlackClientError, OSError) as exc:
        return [
            Finding(
                False,
                "slack auth",
                f"cannot reach SLACK_API_URL {settings.slack_api_url}: {_slack_error(exc)}",
            )
        ]
    bot_name = auth.get("user") or "the bot"
    found = [
        Finding(
            True,
            "slack auth",
            f"team {auth.get('team', '?')} ({auth.get('team_id', '?')}), "
            f"bot @{bot_name} ({auth.get('user_id', '?')})",
        )
    ]
    scopes = _scopes(auth)
    if scopes is not None:
        if "chat:write" in scopes:
            found.append(Finding(True, "slack scopes", ", ".join(sorted(scopes))))
        else:
            found.append(
                Finding(
                    False,
                    "slack scopes",
                    "the bot token lacks chat:write; add it under OAuth & Permissions and "
                    "reinstall the app",
                )
            )
    found += _app_token_findings(settings, mode, client_for)
    for channel in settings.routing.channels():
        found.append(_channel_finding(bot, channel, scopes, bot_name))
    found += escalation_findings(bot, settings.routing, scopes, bot_name)
    found.append(thread_replies_finding(scopes))
    if scopes is not None:
        found.append(organisation_finding(settings.routing, scopes))
    return found


def organisation_finding(routing: Routing, scopes: set[str]) -> Finding:
    """Whether the bot can tell a person's organisation (``users:read``): a route without
    answerers admits only its channel's members of the app's own organisation, so without it
    every answer on such a route is refused ("could not check")."""
    if "users:read" in scopes:
        return Finding(True, "slack people", "can read a person's organisation (users:read)")
    open_routes = not routing.default_answerers or any(not r.answerers for r in routing.rules)
    return Finding(
        True,
        "slack people",
        "the bot token lacks users:read: on routes without answerers every answer is refused "
        "(a person's organisation cannot be checked); add it under OAuth & Permissions and "
        "reinstall"
        if open_routes
        else "the bot token lacks users:read (not needed while every route names answerers)",
        warning=open_routes,
    )


def escalation_targets(routing: Routing) -> list[str]:
    """Every ``escalate_to`` of the routing file (channels and people), without duplicates."""
    every = [routing.default_followups, *(rule.followups for rule in routing.rules)]
    return list(dict.fromkeys(f.escalate_to for f in every if f.escalate_to))


def escalation_findings(
    bot: WebClient, routing: Routing, scopes: set[str] | None, bot_name: str
) -> list[Finding]:
    """Whether the bot can post to every escalation channel, open a DM with every escalation
    person, and open DMs at all (subscribers' DM cards need ``im:write``)."""
    found: list[Finding] = []
    routed = set(routing.channels())
    people = []
    for target in escalation_targets(routing):
        if USER_ID.match(target):
            people.append(target)
        elif target not in routed:
            found.append(_channel_finding(bot, target, scopes, bot_name))
    for person in people:
        found.append(_dm_finding(bot, person))
    if scopes is not None:
        if "im:write" in scopes:
            found.append(Finding(True, "slack direct messages", "can open DMs (im:write)"))
        else:
            found.append(
                Finding(
                    not people,
                    "slack direct messages",
                    "the bot token lacks im:write: subscribers' DM cards and escalation to a "
                    "person cannot be sent; add it under OAuth & Permissions and reinstall",
                    warning=not people,
                )
            )
    return found


#: The scopes the message events of thread replies come with (channel, private channel, DM).
REPLY_SCOPES = {
    "channels:history": "message.channels",
    "groups:history": "message.groups",
    "im:history": "message.im",
}


def thread_replies_finding(scopes: set[str] | None) -> Finding:
    """Whether replies in a card's thread can reach the bot. The bot token shows its scopes;
    Slack offers a bot token no way to read the app's event subscriptions or its App Home
    Messages tab, so those are named as what to check, a warning."""
    toggle = (
        "Event Subscriptions → Subscribe to bot events: message.channels, message.groups, "
        'message.im; App Home → Messages Tab on, "Allow users to send Slash commands and '
        'messages from the messages tab" ticked'
    )
    if scopes is None:
        return Finding(True, "slack thread replies", f"not verified: check {toggle}", warning=True)
    missing = sorted(scope for scope in REPLY_SCOPES if scope not in scopes)
    if missing:
        events = ", ".join(REPLY_SCOPES[scope] for scope in missing)
        return Finding(
            True,
            "slack thread replies",
            f"the bot token lacks {', '.join(missing)}: replies in card threads ({events}) "
            f"cannot answer; add them under OAuth & Permissions, reinstall, and check {toggle}",
            warning=True,
        )
    return Finding(
        True,
        "slack thread replies",
        f"scopes present; not verifiable with a bot token: {toggle}",
        warning=True,
    )


def _dm_finding(bot: WebClient, user_id: str) -> Finding:
    name = f"slack escalation {user_id}"
    try:
        bot.conversations_open(users=user_id)
    except SlackApiError as exc:
        return Finding(False, name, f"cannot open a DM with {user_id}: {_slack_error(exc)}")
    except (SlackClientError, OSError) as exc:
        return Finding(False, name, f"conversations.open failed: {_slack_error(exc)}")
    return Finding(True, name, f"can open a DM with {user_id}")


def _app_token_findings(
    settings: Settings, mode: Mode, client_for: Callable[[str], WebClient]
) -> list[Finding]:
    if settings.slack_app_token is None:
        return [
            Finding(
                True,
                "slack mode",
                f"HTTP mode: Slack must reach POST /slack/events on this server (PORT "
                f"{settings.port}); set SLACK_APP_TOKEN for Socket Mode",
            )
        ]
    found = [Finding(True, "slack app token", "SLACK_APP_TOKEN is an app-level token (xapp-…)")]
    if mode != "socket":
        found.append(Finding(True, "slack mode", "HTTP mode (--http): SLACK_APP_TOKEN is unused"))
        return found
    app_token = settings.slack_app_token.get_secret_value()
    try:
        client_for(app_token).apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        error = _slack_error(exc)
        fix = {
            "invalid_auth": "; create a new app-level token and put it in SLACK_APP_TOKEN",
            "not_allowed_token_type": "; SLACK_APP_TOKEN must be an app-level token (xapp-…)",
        }.get(error, "")
        if error.startswith("missing_scope"):
            fix = "; give the app-level token the connections:write scope"
        found.append(
            Finding(False, "slack socket mode", f"apps.connections.open refused: {error}{fix}")
        )
    except (SlackClientError, OSError) as exc:
        found.append(
            Finding(
                False, "slack socket mode", f"apps.connections.open failed: {_slack_error(exc)}"
            )
        )
    else:
        found.append(
            Finding(True, "slack socket mode", "apps.connections.open works with SLACK_APP_TOKEN")
        )
    return found


def _channel_finding(
    bot: WebClient, channel_id: str, scopes: set[str] | None, bot_name: str
) -> Finding:
    name = f"slack channel {channel_id}"
    try:
        info = bot.conversations_info(channel=channel_id)
    except SlackApiError as exc:
        error = _slack_error(exc)
        if error.startswith("missing_scope"):
            return Finding(
                True,
                name,
                f"not verified: the bot token lacks the scope to read channels ({error}); "
                f"make sure @{bot_name} is a member",
                warning=True,
            )
        if error == "channel_not_found":
            return Finding(
                False,
                name,
                f"channel not found (or it is private and @{bot_name} is not in it); check the "
                f"id, then /invite @{bot_name}",
            )
        return Finding(False, name, f"conversations.info failed: {error}")
    except (SlackClientError, OSError) as exc:
        return Finding(False, name, f"conversations.info failed: {_slack_error(exc)}")
    data = info.get("channel") or {}
    label = f"#{data['name']}" if data.get("name") else channel_id
    if data.get("is_archived"):
        return Finding(False, name, f"{label} is archived; unarchive it or pick another channel")
    if data.get("is_member"):
        return Finding(True, name, f"{label}: @{bot_name} is a member and can post")
    if not data.get("is_private") and scopes is not None and "chat:write.public" in scopes:
        return Finding(True, name, f"{label}: not a member, can post (chat:write.public)")
    return Finding(False, name, f"{label}: @{bot_name} is not a member; /invite @{bot_name} there")
