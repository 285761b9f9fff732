"""Credentials in URLs (user:password@ in KANDEV_URL, KANDEV_PUBLIC_URL, DATABASE_URL) never
reach a link people see, a repr, or an unredacted output."""

from __future__ import annotations

from kandev_slack.config.settings import load_settings
from kandev_slack.ops.redaction import Redactor, url_password, without_userinfo
from tests.unit.config.test_settings import good_env


def test_links_never_carry_credentials_from_kandev_public_url() -> None:
    settings = load_settings(good_env(KANDEV_PUBLIC_URL="https://ana:l1nkpass@kandev.example.com/"))
    assert settings.kandev_public_url == "https://kandev.example.com"


def test_the_default_public_url_drops_kandev_urls_credentials_but_the_client_keeps_them() -> None:
    settings = load_settings(good_env(KANDEV_URL="http://proxy:pr0xyp4ss@kandev.internal:38429"))
    assert settings.kandev_url == "http://proxy:pr0xyp4ss@kandev.internal:38429"  # basic auth
    assert settings.kandev_public_url == "http://kandev.internal:38429"


def test_every_password_in_a_url_is_a_secret_to_redact() -> None:
    settings = load_settings(
        good_env(
            KANDEV_URL="http://proxy:pr0xy%40pass@kandev.internal",
            KANDEV_PUBLIC_URL="https://ana:l1nkpass@kandev.example.com",
            DATABASE_URL="postgresql://bot:dbp%23ss@db/kandev",
        )
    )
    secrets = set(settings.secret_values())
    assert {"pr0xy@pass", "dbp#ss"} <= secrets  # the public URL's is dropped, never used
    shown = repr(settings) + str(settings)
    for secret in ("pr0xy", "l1nkpass", "dbp"):
        assert secret not in shown, shown


def test_a_bad_url_with_credentials_is_refused_without_showing_them() -> None:
    from tests.unit.config.test_settings import problems

    found = problems(good_env(KANDEV_URL="ftp://ops:hunter2@kandev"))
    assert any("KANDEV_URL is not an http(s) URL" in p for p in found), found
    assert "hunter2" not in "\n".join(found)


def test_url_helpers() -> None:
    assert without_userinfo("https://u:p@h:1/a?b#c") == "https://h:1/a?b#c"
    assert without_userinfo("https://h/a@b") == "https://h/a@b"  # an @ in the path is no userinfo
    assert url_password("postgresql://u:p%40ss@h/db") == "p@ss"
    assert url_password("postgresql://u@h/db") is None
    redact = Redactor(["p@ss"])
    assert (
        redact("dsn postgresql://u:p%40ss@h/db pw p@ss")
        == "dsn postgresql://[redacted]@h/db pw [redacted]"
    )
    assert Redactor(["a1"])("x a1 y") == "x [redacted] y"  # any length
