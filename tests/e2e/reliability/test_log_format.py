"""Guarantee 8 in both log formats: with LOG_FORMAT=text or json, every configured secret
(Slack bot and app tokens, the signing secret, the Kandev token, the passwords in DATABASE_URL
and KANDEV_URL) is redacted from messages, arguments, tracebacks and uncaught exceptions; json
writes one object per line with its time, level, logger, message and context. Runs in a child
interpreter: the logging set-up is process-global."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-111-222-bot5ecretvalue",
    "SLACK_APP_TOKEN": "xapp-1-A0-333-app5ecretvalue",
    "SLACK_SIGNING_SECRET": "s1gn1ng5ecretvalue",
    "KANDEV_TOKEN": "kandev_pat_kandev5ecretvalue",
}
DB_PASSWORD = 'db"pa\\ss5ecret'  # JSON escapes both characters
KANDEV_PASSWORD = "kandevpw5ecret"
ENV = {
    **SECRETS,
    "KANDEV_SLACK_CHANNEL": "C0QUESTION",
    "DATABASE_URL": "postgresql://bot:db%22pa%5Css5ecret@db.internal:5432/bot",
    "KANDEV_URL": f"http://ops:{KANDEV_PASSWORD}@kandev.internal:38429",
}
ALL = [*SECRETS.values(), DB_PASSWORD, KANDEV_PASSWORD]

SCRIPT = textwrap.dedent(
    """
    import logging, os, sys, threading
    from kandev_slack.config.settings import load_settings
    from kandev_slack.ops.logs import configure_logging, install_redaction, log_context, set_replica

    settings = load_settings(os.environ)
    configure_logging("DEBUG", sys.argv[1])
    install_redaction(settings.secret_values())
    set_replica("pub-test")
    log = logging.getLogger("bot.test")
    secrets = sys.argv[2:]
    with log_context(pending_id="p-1", user="U0ALICE", channel="C0QUESTION"):
        for n, secret in enumerate(secrets):
            log.info("secret %d in the message: " + secret.replace("%", "%%"), n)
            log.warning("secret %d in the arguments: %s / %r", n, secret, {"auth": secret})
            try:
                raise RuntimeError(f"secret {n} in an exception: {secret}")
            except RuntimeError:
                log.exception("failed %d", n)
    log.error("database at %s is down", settings.database_url)
    log.error("kandev at %s is down", settings.kandev_url)

    def worker():
        raise ValueError("thread died holding " + secrets[0])

    t = threading.Thread(target=worker, name="publisher")
    t.start()
    t.join()
    """
)


def run(fmt: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, fmt, *ALL],
        env={"PATH": "/usr/bin:/bin", **ENV},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def leaks(output: str) -> list[str]:
    forms = set(ALL) | {json.dumps(s)[1:-1] for s in ALL} | {repr(s)[1:-1] for s in ALL}
    return sorted(f for f in forms if f in output)


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.fault("secrets in text and JSON logs", guarantee=8)
def test_every_secret_is_redacted_in_both_formats(fmt: str, reliability) -> None:
    output = run(fmt)
    assert leaks(output) == [], output
    # each secret: message, arguments (twice), exception; the two URLs; the thread's death
    assert output.count("[redacted]") >= 4 * len(ALL) + 3, output
    for n in range(len(ALL)):
        assert f"secret {n} in the message: [redacted]" in output
    assert "postgresql+psycopg://[redacted]@db.internal:5432/bot is down" in output
    assert "http://[redacted]@kandev.internal:38429 is down" in output
    if fmt == "json":
        lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
        assert len(lines) == len(output.splitlines()) or all(
            not line.strip() for line in output.splitlines() if not line.startswith("{")
        ), output
        assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
        inside = [line for line in lines if line["message"].startswith("secret 0 in the message")]
        assert inside[0]["pending_id"] == "p-1"
        assert (inside[0]["user"], inside[0]["channel"]) == ("U0ALICE", "C0QUESTION")
        assert {line["replica"] for line in lines} == {"pub-test"}
        failed = [line for line in lines if line["message"] == "failed 0"]
        assert "[redacted]" in failed[0]["exception"]
        died = [
            line for line in lines if line["message"] == "uncaught exception in thread publisher"
        ]
        assert "thread died holding [redacted]" in died[0]["exception"]
        assert "pending_id" not in died[0]  # outside any context
    else:
        assert not output.lstrip().startswith("{")
        assert "INFO bot.test: secret 0 in the message: [redacted]" in output
    reliability.record(f"secrets in {fmt} logs", guarantee=8, survived=True)
