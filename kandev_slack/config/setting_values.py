"""The checks of single setting values, and the help each problem gives
(kandev_slack/config/settings.py validates the whole environment with them)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr

MAX_RETENTION_DAYS = 36500
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

BOT_TOKEN_HELP = "the Bot User OAuth Token (xoxb-…) from your Slack app's OAuth & Permissions page"
APP_TOKEN_HELP = (
    "an app-level token (xapp-…) from Basic Information → App-Level Tokens, "
    "with the connections:write scope"
)
MISSING = {
    "SLACK_BOT_TOKEN": f"SLACK_BOT_TOKEN is not set; set it to {BOT_TOKEN_HELP}",
}


class ConfigError(Exception):
    """The configuration cannot be used; ``problems`` has one line per problem."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


def url_problem(name: str, value: str, example: str) -> str | None:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        shown = f" ('{value}')" if "@" not in value else ""
        return f"{name} is not an http(s) URL{shown}; write it like {example}"
    return None


def not_a_slack_token(value: Any, problem: str) -> Any:
    """``value`` as given, unless it is a Slack token in the wrong setting (``problem``)."""
    if value is None:
        return None
    text = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
    if looks_like_slack_token(text):
        raise ValueError(problem)
    return value


def looks_like_slack_token(value: str) -> bool:
    return value.startswith(("xoxb-", "xoxp-", "xapp-", "xoxa-", "xoxe"))


def secret_text(value: SecretStr | None) -> str | None:
    """A secret setting's text, or None when it is not set."""
    return value.get_secret_value() if value is not None else None


def whole_number(value: Any, name: str, highest: int, *, unit: str = "") -> int:
    """``value`` as a whole number from 1 to ``highest``, else a ValueError naming ``name``."""
    text = str(value).strip()
    if not text.isdigit() or not 1 <= int(text) <= highest:
        of = f" of {unit}" if unit else ""
        raise ValueError(f"{name} must be a whole number{of} from 1 to {highest} (got '{text}')")
    return int(text)


def positive_seconds(value: Any, name: str, example: str) -> float:
    """``value`` as a finite number of seconds above 0, else a ValueError naming ``name``."""
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(
            f"{name} must be a number of seconds above 0, e.g. {example} (got '{text}')"
        )
    return seconds
