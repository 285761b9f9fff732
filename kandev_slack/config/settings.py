"""Settings from the environment, validated at start-up.

:func:`load_settings` checks every variable and the routing file and raises :class:`ConfigError`
listing *every* problem at once, each naming its variable and the fix. Secrets are ``SecretStr``
and never appear in a repr, a message or an error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from kandev_slack.config.database_url import DEFAULT_DATABASE_URL, DatabaseUrlError, normalize_url
from kandev_slack.config.routing import Routing, RoutingError, channel_id_problem
from kandev_slack.config.routing_file import load_routing
from kandev_slack.config.setting_values import (
    APP_TOKEN_HELP,
    BOT_TOKEN_HELP,
    LOG_LEVELS,
    MAX_RETENTION_DAYS,
    MISSING,
    ConfigError,
    not_a_slack_token,
    positive_seconds,
    url_problem,
    whole_number,
)
from kandev_slack.core.limits import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from kandev_slack.ops.redaction import url_password, without_userinfo
from kandev_slack.ops.vault import SECRET_KEY_SETTING, Vault, VaultError

Mode = Literal["http", "socket"]


#: RETENTION_DAYS bounds: at least a day, at most a century.
#: The Slack tokens: (the prefix each must have, what to say of a token of another kind, what
#: to say of anything else).
SLACK_TOKENS = {
    "slack_bot_token": (
        "xoxb-",
        {
            "xapp-": "SLACK_BOT_TOKEN looks like an app-level token (xapp-…); put it in "
            "SLACK_APP_TOKEN",
            "xoxp-": f"SLACK_BOT_TOKEN looks like a user token (xoxp-…); use {BOT_TOKEN_HELP}",
        },
        f"SLACK_BOT_TOKEN does not look like a bot token; use {BOT_TOKEN_HELP}",
    ),
    "slack_app_token": (
        "xapp-",
        {"xoxb-": "SLACK_APP_TOKEN looks like a bot token (xoxb-…); put it in SLACK_BOT_TOKEN"},
        f"SLACK_APP_TOKEN does not look like an app-level token; use {APP_TOKEN_HELP}",
    ),
}
#: Settings that must not hold a Slack token, and what to say when one does.
NOT_SLACK_TOKENS = {
    "slack_signing_secret": "SLACK_SIGNING_SECRET looks like a token; use the Signing Secret "
    "from Basic Information → App Credentials",
    "kandev_token": "KANDEV_TOKEN looks like a Slack token; use a Kandev personal access token "
    "(kandev_pat_…, Kandev settings → API tokens)",
}


class Settings(BaseSettings):
    """Every setting of kandev-slack. Build it with :func:`load_settings` (full validation)."""

    model_config = SettingsConfigDict(
        case_sensitive=False, env_ignore_empty=True, extra="ignore", frozen=True
    )

    slack_bot_token: SecretStr
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    kandev_url: str = Field(default="http://localhost:38429", repr=False)  # may hold userinfo
    kandev_token: SecretStr | None = None
    #: The keys the people's own Kandev tokens are encrypted with (kandev_slack/ops/vault.py):
    #: comma-separated Fernet keys, newest first. Required when a route's identity is
    #: "linked" or "required".
    kandev_slack_secret_key: SecretStr | None = None
    kandev_public_url: str = "http://localhost:38429"
    kandev_slack_channel: str | None = None
    kandev_slack_config: Path | None = None
    database_url: str = Field(default=DEFAULT_DATABASE_URL, repr=False)  # may hold a password
    port: int = 3000
    #: A port for a small server of /metrics and /healthz (Socket Mode has no other).
    metrics_port: int | None = None
    kandev_poll_interval: float = 5.0
    #: Seconds between two full approval sweeps while Kandev's push hints are up (the other
    #: poll intervals read only the task lists; without hints every interval is a full sweep).
    kandev_full_sweep_interval: float = 60.0
    kandev_list_page_size: int = DEFAULT_PAGE_SIZE  # bundles per page of /kandev-questions
    #: Tasks per page when the approval sweep reads a workspace's tasks (every page is read).
    kandev_tasks_page_size: int = 100
    #: KANDEV_HINTS=off: no WebSocket push hints, discovery by polling only (benchmarks, or a
    #: proxy that cannot pass WebSockets).
    kandev_hints: bool = True
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = "text"
    #: Resolved cards (with their submissions), audit entries and Home viewers older than this
    #: many days are deleted.
    retention_days: int = 90
    #: PostgreSQL: every session's lock_timeout, statement_timeout and
    #: idle_in_transaction_session_timeout, in seconds (see kandev_slack/store/sql/engine.py).
    database_lock_timeout: float = 5.0
    database_statement_timeout: float = 15.0
    database_idle_in_transaction_timeout: float = 30.0
    #: Seconds in one hour of a snooze (1 h / 4 h / 24 h): 3600; shorter only in tests.
    snooze_hour_s: float = 3600.0
    #: Seconds between two looks for quiet hours that ended (their summaries): 30; shorter in
    #: tests.
    quiet_check_s: float = 30.0
    #: How often the digests due are looked for (kandev_slack/usecases/followups/digests.py).
    digest_check_s: float = 30.0
    #: Seconds added to the digests' clock: tests only (a digest time comes sooner).
    digest_clock_shift_s: float = 0.0
    #: Seconds a linked person's Kandev Needs-you inbox (what they hid there) is kept before it
    #: is read again (kandev_slack/usecases/views/seeing.py): 15; shorter only in tests.
    inbox_hidden_ttl_s: float = 15.0
    #: Seconds between two rounds that have the DM cards follow people's Kandev inboxes
    #: (kandev_slack/usecases/answering/snooze.py, ``SnoozeWorker``): 5; shorter only in tests.
    inbox_follow_s: float = 5.0

    _routing: Routing | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _public_url_defaults_to_kandev_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("kandev_public_url"):
            return {**data, "kandev_public_url": data.get("kandev_url", "http://localhost:38429")}
        return data

    @field_validator(*SLACK_TOKENS, mode="before")
    @classmethod
    def _slack_token(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name == "slack_app_token":
            return None
        prefix, wrong, otherwise = SLACK_TOKENS[info.field_name or ""]
        text = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
        if text.startswith(prefix):
            return value
        for other, message in wrong.items():
            if text.startswith(other):
                raise ValueError(message)
        raise ValueError(otherwise)

    @field_validator(*NOT_SLACK_TOKENS, mode="before")
    @classmethod
    def _not_a_slack_token(cls, value: Any, info: ValidationInfo) -> Any:
        return not_a_slack_token(value, NOT_SLACK_TOKENS[info.field_name or ""])

    @field_validator("kandev_slack_secret_key", mode="before")
    @classmethod
    def _secret_key(cls, value: Any) -> Any:
        if value is None:
            return None
        text = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
        try:
            Vault.from_keys(text)
        except VaultError as exc:  # names the bad key by its place, never its text
            raise ValueError(str(exc)) from None
        return value

    @field_validator("slack_api_url", mode="before")
    @classmethod
    def _slack_api_url(cls, value: Any) -> str:
        text = str(value).strip()
        if problem := url_problem("SLACK_API_URL", text, "https://slack.com/api/"):
            raise ValueError(problem)
        return text.rstrip("/") + "/"

    @field_validator("kandev_url", "kandev_public_url", mode="before")
    @classmethod
    def _kandev_urls(cls, value: Any, info: Any) -> str:
        text = str(value).strip()
        name = info.field_name.upper()
        if problem := url_problem(name, text, "http://localhost:38429"):
            raise ValueError(problem)
        if info.field_name == "kandev_public_url":
            text = without_userinfo(text)  # links in cards never carry credentials
        return text.rstrip("/")

    @field_validator("kandev_slack_channel", mode="before")
    @classmethod
    def _channel(cls, value: Any) -> str | None:
        if value is None:
            return None
        text = str(value).strip()
        if problem := channel_id_problem(text):
            raise ValueError(f"KANDEV_SLACK_CHANNEL: {problem}")
        return text

    @field_validator("database_url", mode="before")
    @classmethod
    def _database_url(cls, value: Any) -> str:
        try:
            url = normalize_url(str(value))
        except DatabaseUrlError as exc:
            raise ValueError(str(exc)) from None
        return url.render_as_string(hide_password=False)

    @field_validator("port", "metrics_port", mode="before")
    @classmethod
    def _port(cls, value: Any, info: Any) -> int | None:
        if value is None:
            return None
        text = str(value).strip()
        name = info.field_name.upper()
        if not text.isdigit() or not 1 <= int(text) <= 65535:
            raise ValueError(f"{name} must be a TCP port number from 1 to 65535 (got '{text}')")
        return int(text)

    @field_validator("log_format", mode="before")
    @classmethod
    def _log_format(cls, value: Any) -> str:
        text = str(value).strip().lower()
        if text not in ("text", "json"):
            raise ValueError(f"LOG_FORMAT must be text or json (got '{value}')")
        return text

    @field_validator("kandev_poll_interval", mode="before")
    @classmethod
    def _poll_interval(cls, value: Any) -> float:
        return positive_seconds(value, "KANDEV_POLL_INTERVAL", "5")

    @field_validator("kandev_full_sweep_interval", mode="before")
    @classmethod
    def _full_sweep_interval(cls, value: Any) -> float:
        return positive_seconds(value, "KANDEV_FULL_SWEEP_INTERVAL", "60")

    @field_validator(
        "database_lock_timeout",
        "database_statement_timeout",
        "database_idle_in_transaction_timeout",
        mode="before",
    )
    @classmethod
    def _database_timeouts(cls, value: Any, info: Any) -> float:
        return positive_seconds(value, str(info.field_name).upper(), "5")

    @field_validator("snooze_hour_s", mode="before")
    @classmethod
    def _snooze_hour(cls, value: Any) -> float:
        return positive_seconds(value, "SNOOZE_HOUR_S", "3600")

    @field_validator("quiet_check_s", mode="before")
    @classmethod
    def _quiet_check(cls, value: Any) -> float:
        return positive_seconds(value, "QUIET_CHECK_S", "30")

    @field_validator("digest_check_s", mode="before")
    @classmethod
    def _digest_check(cls, value: Any) -> float:
        return positive_seconds(value, "DIGEST_CHECK_S", "30")

    @field_validator("inbox_hidden_ttl_s", mode="before")
    @classmethod
    def _inbox_hidden_ttl(cls, value: Any) -> float:
        return positive_seconds(value, "INBOX_HIDDEN_TTL_S", "15")

    @field_validator("inbox_follow_s", mode="before")
    @classmethod
    def _inbox_follow(cls, value: Any) -> float:
        return positive_seconds(value, "INBOX_FOLLOW_S", "5")

    @field_validator("digest_clock_shift_s", mode="before")
    @classmethod
    def _digest_clock_shift(cls, value: Any) -> float:
        text = str(value).strip()
        try:
            shift = float(text)
        except ValueError:
            shift = float("nan")
        if not abs(shift) < 366 * 86400:
            raise ValueError(
                f"DIGEST_CLOCK_SHIFT_S must be a number of seconds (tests only; got '{text}')"
            )
        return shift

    @field_validator("kandev_list_page_size", mode="before")
    @classmethod
    def _list_page_size(cls, value: Any) -> int:
        return whole_number(value, "KANDEV_LIST_PAGE_SIZE", MAX_PAGE_SIZE)

    @field_validator("kandev_tasks_page_size", mode="before")
    @classmethod
    def _tasks_page_size(cls, value: Any) -> int:
        return whole_number(value, "KANDEV_TASKS_PAGE_SIZE", 1000)

    @field_validator("retention_days", mode="before")
    @classmethod
    def _retention_days(cls, value: Any) -> int:
        return whole_number(value, "RETENTION_DAYS", MAX_RETENTION_DAYS, unit="days")

    @field_validator("log_level", mode="before")
    @classmethod
    def _log_level(cls, value: Any) -> str:
        text = str(value).strip().upper()
        if text not in LOG_LEVELS:
            raise ValueError(f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)} (got '{value}')")
        return text

    @property
    def routing(self) -> Routing:
        """Where cards go and who may answer (KANDEV_SLACK_CONFIG, else KANDEV_SLACK_CHANNEL)."""
        if self._routing is None:
            self._routing = load_routing(self.kandev_slack_config, self.kandev_slack_channel)
        return self._routing

    def secret_keys(self) -> list[str]:
        """Each key of KANDEV_SLACK_SECRET_KEY (none when it is not set)."""
        if self.kandev_slack_secret_key is None:
            return []
        text = self.kandev_slack_secret_key.get_secret_value()
        return [key.strip() for key in text.split(",") if key.strip()]

    def vault(self) -> Vault | None:
        """The vault of KANDEV_SLACK_SECRET_KEY, or None when it is not set (the people's own
        Kandev tokens can then be neither stored nor read)."""
        if self.kandev_slack_secret_key is None:
            return None
        return Vault.from_keys(self.kandev_slack_secret_key.get_secret_value())

    def secret_values(self) -> list[str]:
        """The secrets in force, for redacting them from any output."""
        secrets = [self.slack_bot_token, self.slack_signing_secret, self.slack_app_token]
        secrets.append(self.kandev_token)
        found = [s.get_secret_value() for s in secrets if s is not None and s.get_secret_value()]
        found += self.secret_keys()
        password = normalize_url(self.database_url).password
        found += [str(password)] if password else []
        kandev_password = url_password(self.kandev_url)
        return found + ([kandev_password] if kandev_password else [])


def _env_values(env: Mapping[str, str]) -> dict[str, str]:
    """The non-empty settings variables in ``env``, keyed by field name."""
    values: dict[str, str] = {}
    for name in Settings.model_fields:
        raw = env.get(name.upper())
        if raw is not None and raw.strip():
            values[name] = raw.strip()
    return values


def _describe(error: Any) -> str:
    name = str(error["loc"][0]).upper() if error["loc"] else "configuration"
    if error["type"] == "missing":
        return MISSING.get(name, f"{name} is not set")
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    return f"{name}: {error['msg']}"


def _mode_problems(flag: Mode | None, has_app_token: bool, has_signing_secret: bool) -> list[str]:
    mode = resolve_flag(flag, has_app_token)
    if mode == "socket" and not has_app_token:
        return [f"SLACK_APP_TOKEN is not set; Socket Mode (--socket) needs {APP_TOKEN_HELP}"]
    if mode == "http" and not has_signing_secret:
        return [
            "SLACK_SIGNING_SECRET is not set; HTTP mode needs the Signing Secret from Basic "
            "Information → App Credentials (or set SLACK_APP_TOKEN to use Socket Mode)"
        ]
    return []


def _secret_key_problems(routing: Routing) -> list[str]:
    """KANDEV_SLACK_SECRET_KEY missing while a route acts with the people's own Kandev tokens
    (identity "linked" or "required"): they are stored encrypted with it."""
    if not routing.needs_tokens:
        return []
    if routing.default_identity != "bot":
        where = f'identity = "{routing.default_identity}" in [defaults]'
    else:
        rule = next(rule for rule in routing.rules if rule.identity != "bot")
        where = f'identity = "{rule.identity}" in the [[route]] at line {rule.line}'
    return [
        f"{SECRET_KEY_SETTING} is not set, but the routing file {routing.source} has {where}: "
        "the people's own Kandev tokens are stored encrypted with that key; run "
        f"`kandev-slack secret-key` and set {SECRET_KEY_SETTING} to the key it prints"
    ]


def resolve_flag(flag: Mode | None, has_app_token: bool) -> Mode:
    """Socket Mode when asked for, or by default when an app-level token is configured."""
    if flag is not None:
        return flag
    return "socket" if has_app_token else "http"


def resolve_mode(settings: Settings, flag: Mode | None = None) -> Mode:
    """The mode to run in; raises ConfigError naming the variable the mode lacks."""
    has_app = settings.slack_app_token is not None
    problems = _mode_problems(flag, has_app, settings.slack_signing_secret is not None)
    if problems:
        raise ConfigError(problems)
    return resolve_flag(flag, has_app)


#: Stands in for a missing or invalid SLACK_BOT_TOKEN in :func:`load_partial` (never used:
#: Slack is not checked then).
_NO_BOT_TOKEN = "xoxb-not-set"


@dataclass(frozen=True)
class PartialSettings:
    """What :func:`load_partial` could make of the environment."""

    settings: Settings  # every valid setting; invalid or missing ones at their defaults
    problems: list[str]  # everything load_settings would refuse, by variable name
    invalid: frozenset[str]  # the settings (field names) that are missing or invalid

    def usable(self, *names: str) -> bool:
        """Whether these settings are all there and valid."""
        return not self.invalid.intersection(names)


def load_partial(env: Mapping[str, str] | None = None, mode: Mode | None = None) -> PartialSettings:
    """Like :func:`load_settings`, but never refuses: the problems are returned with settings
    made of whatever is valid (``kandev-slack check`` still checks what it can)."""
    source = os.environ if env is None else env
    try:
        return PartialSettings(load_settings(source, mode), [], frozenset())
    except ConfigError as exc:
        problems = exc.problems
    values = _env_values(source)
    invalid: set[str] = set()
    try:
        Settings.model_validate(values)
    except ValidationError as exc:
        invalid = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
    # Invalid settings at their defaults, given explicitly: the environment is not read again.
    kept: dict[str, Any] = {k: v for k, v in values.items() if k not in invalid}
    for name in invalid - {"slack_bot_token"}:
        kept[name] = Settings.model_fields[name].default
    if "slack_bot_token" not in kept:
        invalid.add("slack_bot_token")
        kept["slack_bot_token"] = _NO_BOT_TOKEN
    settings = Settings.model_validate(kept)
    fallback = kept.get("kandev_slack_channel")
    try:
        routing = load_routing(kept.get("kandev_slack_config"), fallback)
    except RoutingError:
        invalid.add("kandev_slack_config")
        routing = Routing(default_channel=fallback)
    settings._routing = routing
    return PartialSettings(settings, problems, frozenset(invalid))


def load_settings(env: Mapping[str, str] | None = None, mode: Mode | None = None) -> Settings:
    """Validate the environment (``os.environ`` by default) and the routing file.

    ``mode`` is the command-line choice (None = automatic); the variables that mode needs are
    checked too. Raises ConfigError with every problem found.
    """
    values = _env_values(os.environ if env is None else env)
    problems: list[str] = []
    settings: Settings | None = None
    try:
        settings = Settings.model_validate(values)
    except ValidationError as exc:
        for error in exc.errors():
            derived = (
                error["loc"][:1] == ("kandev_public_url",) and "kandev_public_url" not in values
            )
            if not derived:  # a bad KANDEV_URL is reported once, not again as its default
                problems.append(_describe(error))

    problems += _mode_problems(mode, "slack_app_token" in values, "slack_signing_secret" in values)

    fallback = values.get("kandev_slack_channel")
    fallback = fallback if fallback and channel_id_problem(fallback) is None else None
    routing: Routing | None = None
    try:
        routing = load_routing(values.get("kandev_slack_config"), fallback)
    except RoutingError as exc:
        problems += [f"KANDEV_SLACK_CONFIG: {p}" for p in exc.problems]
    if routing is not None and not routing.channels() and "kandev_slack_channel" not in values:
        where = "KANDEV_SLACK_CONFIG names none" if routing.source else "no KANDEV_SLACK_CONFIG"
        problems.append(
            f"KANDEV_SLACK_CHANNEL is not set and {where}: set KANDEV_SLACK_CHANNEL to the id "
            "of the channel for the question cards (C…, from the channel's details)"
        )

    if routing is not None and "kandev_slack_secret_key" not in values:
        problems += _secret_key_problems(routing)

    http = resolve_flag(mode, "slack_app_token" in values) == "http"
    if settings is not None and http and settings.metrics_port == settings.port:
        problems.append(
            f"METRICS_PORT is the same as PORT ({settings.port}); in HTTP mode /metrics is "
            "served on PORT already: leave METRICS_PORT unset or pick another port"
        )

    if problems or settings is None:
        raise ConfigError(problems)
    settings._routing = routing
    return settings
