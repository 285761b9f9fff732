"""Configuration from the environment: every problem by name, all at once; modes; secrets."""

from __future__ import annotations

import pytest

from kandev_slack.config.settings import ConfigError, Settings, load_settings, resolve_mode

BOT = "xoxb-111-222-botsecretvalue"
APP = "xapp-1-A111-333-appsecretvalue"
SIGNING = "0123456789abcdef0123456789abcdef"


def good_env(**overrides: str) -> dict[str, str]:
    env = {
        "SLACK_BOT_TOKEN": BOT,
        "SLACK_SIGNING_SECRET": SIGNING,
        "KANDEV_SLACK_CHANNEL": "C0AB12",
    }
    env.update(overrides)
    return {k: v for k, v in env.items() if v is not None}


def problems(env: dict[str, str], mode=None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_settings(env, mode)
    return caught.value.problems


def test_defaults() -> None:
    settings = load_settings(good_env())
    assert settings.slack_api_url == "https://slack.com/api/"
    assert settings.kandev_url == "http://localhost:38429"
    assert settings.kandev_public_url == "http://localhost:38429"
    assert settings.database_url == "sqlite:///kandev-slack.db"
    assert settings.port == 3000
    assert settings.kandev_poll_interval == 5.0
    assert (
        settings.database_lock_timeout,
        settings.database_statement_timeout,
        settings.database_idle_in_transaction_timeout,
    ) == (5.0, 15.0, 30.0)
    assert settings.log_level == "INFO"
    assert settings.kandev_token is None
    assert settings.slack_app_token is None
    assert settings.routing.default_channel == "C0AB12"


def test_values_are_normalised() -> None:
    settings = load_settings(
        good_env(
            SLACK_API_URL="http://127.0.0.1:8123/api",
            KANDEV_URL=" http://127.0.0.1:9000/ ",
            DATABASE_URL="postgres://bot@db:5432/kandev",
            PORT="8080",
            KANDEV_POLL_INTERVAL="0.5",
            LOG_LEVEL="debug",
            KANDEV_TOKEN="",
        )
    )
    assert settings.slack_api_url == "http://127.0.0.1:8123/api/"
    assert settings.kandev_url == "http://127.0.0.1:9000"
    assert settings.kandev_public_url == "http://127.0.0.1:9000"  # defaults to KANDEV_URL
    assert settings.database_url == "postgresql+psycopg://bot@db:5432/kandev"
    assert settings.port == 8080
    assert settings.kandev_poll_interval == 0.5
    assert settings.log_level == "DEBUG"
    assert settings.kandev_token is None  # empty means unset
    assert load_settings(good_env()).snooze_hour_s == 3600.0
    assert load_settings(good_env(SNOOZE_HOUR_S="3")).snooze_hour_s == 3.0
    # How long a person's Kandev inbox is kept, how often DM cards follow it: shorter in tests.
    assert load_settings(good_env()).inbox_hidden_ttl_s == 15.0
    assert load_settings(good_env()).inbox_follow_s == 5.0
    shorter = load_settings(good_env(INBOX_HIDDEN_TTL_S="0.5", INBOX_FOLLOW_S="1"))
    assert (shorter.inbox_hidden_ttl_s, shorter.inbox_follow_s) == (0.5, 1.0)


def test_public_url_can_differ() -> None:
    settings = load_settings(good_env(KANDEV_PUBLIC_URL="https://kandev.example.com/"))
    assert settings.kandev_public_url == "https://kandev.example.com"


def test_secrets_never_in_repr_or_str() -> None:
    settings = load_settings(
        good_env(
            SLACK_APP_TOKEN=APP,
            KANDEV_TOKEN="kandev_pat_supersecret",
            DATABASE_URL="postgresql://bot:dbpassword@db/kandev",
        )
    )
    shown = repr(settings) + str(settings)
    for secret in (BOT, APP, SIGNING, "kandev_pat_supersecret", "dbpassword"):
        assert secret not in shown
    assert set(settings.secret_values()) == {
        BOT,
        APP,
        SIGNING,
        "kandev_pat_supersecret",
        "dbpassword",
    }


def test_missing_bot_token_is_named_with_the_fix() -> None:
    found = problems(good_env(SLACK_BOT_TOKEN=None))
    assert found == [
        "SLACK_BOT_TOKEN is not set; set it to the Bot User OAuth Token (xoxb-…) from your "
        "Slack app's OAuth & Permissions page"
    ]


def test_swapped_tokens_are_both_reported() -> None:
    found = problems(good_env(SLACK_BOT_TOKEN=APP, SLACK_APP_TOKEN=BOT))
    assert (
        "SLACK_BOT_TOKEN looks like an app-level token (xapp-…); put it in SLACK_APP_TOKEN" in found
    )
    assert "SLACK_APP_TOKEN looks like a bot token (xoxb-…); put it in SLACK_BOT_TOKEN" in found
    assert len(found) == 2


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("SLACK_BOT_TOKEN", "xoxp-user-token", "SLACK_BOT_TOKEN looks like a user token (xoxp-…)"),
        ("SLACK_BOT_TOKEN", "hello", "SLACK_BOT_TOKEN does not look like a bot token"),
        ("SLACK_APP_TOKEN", "hello", "SLACK_APP_TOKEN does not look like an app-level token"),
        ("SLACK_SIGNING_SECRET", BOT, "SLACK_SIGNING_SECRET looks like a token"),
        ("KANDEV_TOKEN", BOT, "KANDEV_TOKEN looks like a Slack token"),
        ("SLACK_API_URL", "slack.com/api", "SLACK_API_URL is not an http(s) URL"),
        ("KANDEV_URL", "localhost:38429", "KANDEV_URL is not an http(s) URL ('localhost:38429')"),
        ("KANDEV_URL", "http://host:99999", "KANDEV_URL is not an http(s) URL"),
        ("KANDEV_PUBLIC_URL", "ftp://x", "KANDEV_PUBLIC_URL is not an http(s) URL"),
        ("KANDEV_SLACK_CHANNEL", "#general", "KANDEV_SLACK_CHANNEL: '#general' is a channel name"),
        (
            "KANDEV_SLACK_CHANNEL",
            "X0ABC",
            "KANDEV_SLACK_CHANNEL: 'X0ABC' is not a Slack channel id",
        ),
        ("DATABASE_URL", "not a url", "DATABASE_URL is not a database URL"),
        ("DATABASE_URL", "mysql://h/db", "DATABASE_URL uses 'mysql'"),
        ("PORT", "abc", "PORT must be a TCP port number from 1 to 65535 (got 'abc')"),
        ("PORT", "70000", "PORT must be a TCP port number from 1 to 65535 (got '70000')"),
        ("KANDEV_POLL_INTERVAL", "0", "KANDEV_POLL_INTERVAL must be a number of seconds above 0"),
        ("KANDEV_POLL_INTERVAL", "soon", "KANDEV_POLL_INTERVAL must be a number of seconds"),
        ("DATABASE_LOCK_TIMEOUT", "0", "DATABASE_LOCK_TIMEOUT must be a number of seconds"),
        (
            "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT",
            "never",
            "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT must be a number of seconds above 0",
        ),
        ("SNOOZE_HOUR_S", "0", "SNOOZE_HOUR_S must be a number of seconds above 0"),
        ("INBOX_HIDDEN_TTL_S", "0", "INBOX_HIDDEN_TTL_S must be a number of seconds above 0"),
        ("INBOX_FOLLOW_S", "-1", "INBOX_FOLLOW_S must be a number of seconds above 0"),
        ("LOG_LEVEL", "loud", "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("KANDEV_SLACK_CONFIG", "/nonexistent/routes.toml", "KANDEV_SLACK_CONFIG: /nonexistent"),
    ],
)
def test_each_problem_names_its_variable(name: str, value: str, expected: str) -> None:
    found = problems(good_env(**{name: value}))
    assert len(found) == 1, found
    assert found[0].startswith(expected), found
    assert found[0].startswith(name)


def test_every_problem_is_reported_at_once() -> None:
    env = {
        "SLACK_BOT_TOKEN": APP,
        "SLACK_APP_TOKEN": BOT,
        "SLACK_API_URL": "nope",
        "KANDEV_URL": "nope",
        "KANDEV_SLACK_CHANNEL": "general",
        "DATABASE_URL": "mysql://h/db",
        "PORT": "http",
        "KANDEV_POLL_INTERVAL": "-1",
        "LOG_LEVEL": "chatty",
    }
    found = problems(env)
    names = [p.split(" ")[0].rstrip(":") for p in found]
    assert names == [
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "SLACK_API_URL",
        "KANDEV_URL",  # reported once, not again for KANDEV_PUBLIC_URL's default
        "KANDEV_SLACK_CHANNEL",
        "DATABASE_URL",
        "PORT",
        "KANDEV_POLL_INTERVAL",
        "LOG_LEVEL",
    ]
    for problem in found:
        assert APP not in problem and BOT not in problem


def test_no_channel_anywhere() -> None:
    found = problems(good_env(KANDEV_SLACK_CHANNEL=None))
    assert found == [
        "KANDEV_SLACK_CHANNEL is not set and no KANDEV_SLACK_CONFIG: set KANDEV_SLACK_CHANNEL to "
        "the id of the channel for the question cards (C…, from the channel's details)"
    ]


def test_channel_from_the_routing_file_is_enough(tmp_path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text('[[route]]\nworkspace = "Platform"\nchannel = "C0PLAT"\n')
    settings = load_settings(good_env(KANDEV_SLACK_CHANNEL=None, KANDEV_SLACK_CONFIG=str(path)))
    assert settings.routing.channels() == ["C0PLAT"]
    assert settings.routing.default_channel is None


def test_routing_file_without_channels_and_no_default(tmp_path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text('[defaults]\nanswerers = ["U0ANA"]\n')
    found = problems(good_env(KANDEV_SLACK_CHANNEL=None, KANDEV_SLACK_CONFIG=str(path)))
    assert found == [
        "KANDEV_SLACK_CHANNEL is not set and KANDEV_SLACK_CONFIG names none: set "
        "KANDEV_SLACK_CHANNEL to the id of the channel for the question cards (C…, from the "
        "channel's details)"
    ]


def test_routing_file_problems_join_the_others(tmp_path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text('[defaults]\nchanel = "C0X1"\n')
    found = problems(good_env(PORT="x", KANDEV_SLACK_CONFIG=str(path)))
    assert found[0].startswith("PORT")
    assert found[1] == (
        f"KANDEV_SLACK_CONFIG: {path}, line 2: unknown key 'chanel' in [defaults]; "
        "allowed: channel, answerers, remind_after, remind_every, max_reminders, mention, "
        "escalate_after, escalate_to, escalate_mention, claim_for, quiet_hours, quiet_tz, "
        "digest, digest_tz, identity, notify_assignee"
    )


def test_routing_default_channel_falls_back_to_env(tmp_path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text('[[route]]\nworkspace = "Platform"\nchannel = "C0PLAT"\n')
    settings = load_settings(good_env(KANDEV_SLACK_CONFIG=str(path)))
    assert settings.routing.default_channel == "C0AB12"
    path.write_text('[defaults]\nchannel = "C0FILE"\n')
    assert load_settings(good_env(KANDEV_SLACK_CONFIG=str(path))).routing.default_channel == (
        "C0FILE"
    )


# ---- modes --------------------------------------------------------------------------------


def test_socket_mode_is_the_default_with_an_app_token() -> None:
    settings = load_settings(good_env(SLACK_APP_TOKEN=APP, SLACK_SIGNING_SECRET=None))
    assert resolve_mode(settings, None) == "socket"
    assert resolve_mode(settings, "socket") == "socket"


def test_http_mode_is_the_default_without_an_app_token() -> None:
    settings = load_settings(good_env())
    assert resolve_mode(settings, None) == "http"
    assert resolve_mode(settings, "http") == "http"


def test_http_flag_wins_over_the_app_token() -> None:
    settings = load_settings(good_env(SLACK_APP_TOKEN=APP), "http")
    assert resolve_mode(settings, "http") == "http"


def test_http_mode_needs_the_signing_secret() -> None:
    found = problems(good_env(SLACK_SIGNING_SECRET=None))
    assert found == [
        "SLACK_SIGNING_SECRET is not set; HTTP mode needs the Signing Secret from Basic "
        "Information → App Credentials (or set SLACK_APP_TOKEN to use Socket Mode)"
    ]
    found = problems(good_env(SLACK_SIGNING_SECRET=None, SLACK_APP_TOKEN=APP), "http")
    assert [p.split(" ")[0] for p in found] == ["SLACK_SIGNING_SECRET"]


def test_socket_mode_needs_the_app_token() -> None:
    found = problems(good_env(), "socket")
    assert len(found) == 1
    assert found[0].startswith("SLACK_APP_TOKEN is not set; Socket Mode (--socket) needs")


def test_resolve_mode_names_the_missing_variable() -> None:
    settings = Settings.model_validate({"slack_bot_token": BOT, "kandev_slack_channel": "C0AB12"})
    with pytest.raises(ConfigError) as caught:
        resolve_mode(settings, "socket")
    assert caught.value.problems[0].startswith("SLACK_APP_TOKEN is not set")
    with pytest.raises(ConfigError) as caught:
        resolve_mode(settings, None)
    assert caught.value.problems[0].startswith("SLACK_SIGNING_SECRET is not set")


def test_load_settings_reads_os_environ_by_default(monkeypatch) -> None:
    for name, value in good_env(PORT="4001").items():
        monkeypatch.setenv(name, value)
    assert load_settings().port == 4001


@pytest.mark.parametrize(
    "given",
    [
        "postgres://bot:pw@db:5432/kandev",
        "postgresql+psycopg://bot@db/kandev?sslmode=require",
        "sqlite+pysqlite:///tmp/k.db",
        "  sqlite:///kandev-slack.db ",
    ],
)
def test_the_settings_hold_the_url_the_store_opens(given: str) -> None:
    from kandev_slack.store import normalize_url

    settings = load_settings(good_env(DATABASE_URL=given))
    assert settings.database_url == normalize_url(given).render_as_string(hide_password=False)


@pytest.mark.parametrize(
    "driver", ["postgresql+asyncpg", "postgresql+psycopg2", "sqlite+aiosqlite"]
)
def test_a_driver_the_store_cannot_open_is_refused_at_start_up(driver: str) -> None:
    found = problems(good_env(DATABASE_URL=f"{driver}://bot:hunter2@db/kandev"))
    assert len(found) == 1 and found[0].startswith(f"DATABASE_URL uses '{driver}'"), found
    assert "hunter2" not in found[0]


@pytest.mark.parametrize("value", ["D0ALICE", "DABC123"])
def test_a_direct_message_channel_is_refused_by_name(value: str) -> None:
    found = problems(good_env(KANDEV_SLACK_CHANNEL=value))
    assert found == [
        f"KANDEV_SLACK_CHANNEL: '{value}' is a direct-message conversation; the bot posts cards "
        "only in channels: use a public or private channel id (C…/G…) and invite the bot there"
    ]


def test_the_approval_sweep_s_page_of_tasks() -> None:
    base = {
        "SLACK_BOT_TOKEN": "xoxb-1-2-abc",
        "SLACK_SIGNING_SECRET": "0123456789abcdef",
        "KANDEV_SLACK_CHANNEL": "C0QUESTION",
    }
    assert load_settings(base).kandev_tasks_page_size == 100
    assert load_settings({**base, "KANDEV_TASKS_PAGE_SIZE": " 7 "}).kandev_tasks_page_size == 7
    with pytest.raises(ConfigError) as caught:
        load_settings({**base, "KANDEV_TASKS_PAGE_SIZE": "0"})
    assert caught.value.problems == [
        "KANDEV_TASKS_PAGE_SIZE must be a whole number from 1 to 1000 (got '0')"
    ]
