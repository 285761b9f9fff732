"""The bot token checked with Slack before anything is built on it (``kandev-slack run``).

Slack refusing the token (:data:`REFUSALS`) cannot be mended by waiting: one plain line and
exit 1. Slack not reachable (a refused or dropped connection, a timeout, a 5xx, a 429, any
other error) is retried with backoff, 0.5 s doubling to 30 s, one log line per attempt and no
traceback, until Slack answers or the process is stopped.
"""

from __future__ import annotations

import logging
import threading

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from kandev_slack.core.exitcodes import EXIT_FAILED, StartupError
from kandev_slack.ops.backoff import doubling, wait_for

log = logging.getLogger("kandev_slack.app")

#: auth.test's errors that no retry can mend.
REFUSALS = frozenset(
    {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "not_allowed_token_type"}
)
#: 0.5 s after the first failed attempt, doubling up to 30 s (as Socket Mode's links).
START_WAIT = doubling(0.5, 30.0)
#: Seconds one auth.test may take.
AUTH_TEST_TIMEOUT_S = 10

_quiet = logging.getLogger("kandev_slack.slack_api.startup.client")
_quiet.addHandler(logging.NullHandler())
_quiet.propagate = False  # slack-sdk logs each failed request itself: ours is the one line


def _why(error: Exception) -> str:
    if isinstance(error, SlackApiError):
        status = getattr(error.response, "status_code", None)
        code = error.response.get("error") if error.response is not None else None
        return f"HTTP {status}" if not code else str(code)
    reason = getattr(error, "reason", None)  # urllib's URLError: the socket's own error
    detail = reason if reason is not None else error
    return f"{type(error).__name__}: {detail}"


def verify_bot_token(
    token: str,
    base_url: str,
    *,
    stop: threading.Event | None = None,
) -> None:
    """Return once Slack accepted ``token`` (auth.test); raise :class:`StartupError` when Slack
    refused it; retry while Slack cannot be reached (until ``stop`` is set: then return)."""
    web = _client(token, base_url)
    stop = stop or threading.Event()
    attempt = 0
    while not stop.is_set():
        attempt += 1
        try:
            web.auth_test()
            return
        except SlackApiError as exc:
            code = exc.response.get("error") if exc.response is not None else None
            if code in REFUSALS:
                raise StartupError(
                    EXIT_FAILED,
                    f"kandev-slack: Slack refused SLACK_BOT_TOKEN ({code}): check the bot token "
                    "(xoxb-…)",
                ) from exc
            error: Exception = exc
        except Exception as exc:  # unreachable, timed out, reset: Slack may come back
            error = exc
        wait_s = wait_for(START_WAIT, attempt)
        log.warning(
            "Slack not reachable at SLACK_API_URL (auth.test, attempt %d: %s); retrying in %.1fs",
            attempt,
            _why(error),
            wait_s,
        )
        stop.wait(wait_s)


def _client(token: str, base_url: str) -> WebClient:
    """A client of its own: no retries (each attempt is one request, one line) and quiet."""
    return WebClient(
        token=token,
        base_url=base_url,
        timeout=AUTH_TEST_TIMEOUT_S,
        logger=_quiet,
        retry_handlers=[],  # not slack-sdk's default one
    )
