"""The preview's two safety rules: it serves 127.0.0.1 only, and it does not start while the
environment holds what looks like a real Slack app's secrets (unless told to): its bot gets
an environment of its own and talks to the local fake, never to slack.com."""

from __future__ import annotations

import re
from collections.abc import Mapping

#: The only address the preview (its page, the fake Slack, the bot) listens on.
HOST = "127.0.0.1"
#: The variables a real Slack app's secrets live in.
SLACK_SECRETS = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_USER_TOKEN", "SLACK_SIGNING_SECRET")
#: What Slack's tokens look like: bot, user, app-level, configuration and legacy tokens.
SLACK_TOKEN = re.compile(r"^\s*(xox[abeoprs]|xapp)-", re.I)


def slack_secrets_in(env: Mapping[str, str]) -> list[str]:
    """The names of the variables in ``env`` that hold (what looks like) a real Slack secret:
    any of :data:`SLACK_SECRETS` set to something, and any ``SLACK_*`` set to a token."""
    found = {name for name in SLACK_SECRETS if env.get(name, "").strip()}
    found |= {
        name
        for name, value in env.items()
        if name.upper().startswith("SLACK_") and SLACK_TOKEN.match(value)
    }
    return sorted(found)


def refusal(env: Mapping[str, str], *, allow_slack_env: bool) -> str | None:
    """Why the preview must not start (None: it may)."""
    found = slack_secrets_in(env)
    if not found or allow_slack_env:
        return None
    return (
        f"{', '.join(found)} {'is' if len(found) == 1 else 'are'} set: the preview does not start "
        "next to a real Slack app's secrets (it never uses them; unset them, or pass "
        "--allow-slack-env)"
    )
