"""`kandev-slack run` as a process when Slack refuses the bot token or cannot be reached at
start-up: a refusal is one plain line and exit 1; an unreachable Slack is waited for, one line
per attempt, never a traceback."""

from __future__ import annotations

import pytest

from kandev_slack.kits.kandevkit import free_port
from tests.kit.polling import eventually


def _lines(bot) -> list[str]:
    """What the process wrote since its start (the harness's own header left out)."""
    return [line for line in bot.logs().rsplit("=====\n", 1)[-1].splitlines() if line.strip()]


@pytest.mark.parametrize(
    "error", ["invalid_auth", "not_authed", "account_inactive", "token_revoked"]
)
def test_a_refused_bot_token_is_one_plain_line_and_exit_1(bot_factory, fake_slack, error) -> None:
    fake_slack.faults.error("auth.test", error, times=None)
    bot = bot_factory(start=False)
    bot.start(wait=False)
    assert bot.proc is not None
    code = bot.proc.wait(30)
    lines = _lines(bot)
    assert code == 1, lines
    assert lines == [
        f"kandev-slack: Slack refused SLACK_BOT_TOKEN ({error}): check the bot token (xoxb-…)"
    ]


def test_an_unreachable_slack_is_retried_one_line_per_attempt(bot_factory) -> None:
    nobody = f"http://127.0.0.1:{free_port()}/api/"
    bot = bot_factory(start=False, SLACK_API_URL=nobody)
    bot.start(wait=False)
    assert bot.proc is not None

    def attempts() -> list[str]:
        return [line for line in _lines(bot) if "Slack not reachable at SLACK_API_URL" in line]

    # Attempts at 0, 0.5, 1.5, 3.5 s after the process is up (its start-up may take a while
    # on a loaded machine: the attempts are waited for, not a fixed time).
    eventually(lambda: len(attempts()) >= 3, timeout=60)
    assert bot.proc.poll() is None, _lines(bot)  # still waiting for Slack
    lines = _lines(bot)
    assert "Traceback" not in bot.logs()
    said = attempts()
    assert 3 <= len(said) <= 5, lines
    for n, line in enumerate(said, start=1):
        assert f"(auth.test, attempt {n}: URLError: [Errno 111] Connection refused)" in line
        # Backoff, never a tight loop: 0.5 s doubling.
        assert line.endswith(f"; retrying in {0.5 * 2 ** (n - 1):.1f}s"), line
    # Nothing else said about Slack (no slack-sdk error lines, no uncaught exception).
    assert [line for line in lines if "slack" in line.lower()] == said, lines


def test_slack_back_after_server_errors_the_bot_starts(bot_factory, fake_slack) -> None:
    fake_slack.faults.server_error("auth.test", status=503, times=3)
    bot = bot_factory(start=False)
    bot.start(wait=True, timeout=30)
    attempts = [line for line in _lines(bot) if "Slack not reachable" in line]
    assert len(attempts) == 3, _lines(bot)
    assert "service_unavailable" in attempts[0]
    assert "Traceback" not in bot.logs()
