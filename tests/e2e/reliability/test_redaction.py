"""Guarantee 8, the mechanism: once install_redaction() ran, a secret that reaches any log
output (message, arguments, a traceback, an uncaught exception in a thread or at top level, a
warning) is printed as [redacted]. Runs in a child interpreter: the hooks are process-global."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SECRET = "xoxb-1234567890-redact-me-please"
PAT = "kandev_pat_0123456789abcdef0123"

SCRIPT = textwrap.dedent(
    f"""
    import logging, threading, warnings
    from kandev_slack.ops.logs import install_redaction

    logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")
    install_redaction([{SECRET!r}, {PAT!r}])
    log = logging.getLogger("bot.test")
    log.info("token in the message {SECRET}")
    log.debug("token in the arguments %s / %r", {SECRET!r}, {{"auth": {PAT!r}}})
    try:
        raise RuntimeError("Authorization: Bearer {PAT}")
    except RuntimeError:
        log.exception("failed with the token in the exception")
    logging.getLogger("slack_bolt.some.library").warning("library says {SECRET}")

    def worker():
        raise ValueError("thread died holding {SECRET}")

    t = threading.Thread(target=worker, name="publisher")
    t.start()
    t.join()
    warnings.warn("deprecated call with {PAT}")
    raise SystemError("top level with {SECRET}")
    """
)


@pytest.mark.fault("secrets in tracebacks and uncaught exceptions", guarantee=8)
def test_every_way_out_of_the_process_is_redacted(reliability) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0  # the top-level exception still ends the process
    for expected in (
        "token in the message",
        "token in the arguments",
        "failed with the token",
        "library says",
        "thread died holding",
        "uncaught exception in thread publisher",
        "deprecated call with",
        "top level with",
    ):
        assert expected in output, (expected, output)
    assert SECRET not in output and PAT not in output, output
    assert output.count("[redacted]") >= 8, output
    reliability.record("secrets in tracebacks and uncaught exceptions", guarantee=8, survived=True)


SHORT = "k9!"  # a secret of any length is redacted, not only long ones
URL_SCRIPT = textwrap.dedent(
    f"""
    import logging
    import httpx
    from kandev_slack.ops.logs import install_redaction

    logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")
    install_redaction([{SHORT!r}])
    log = logging.getLogger("bot.test")
    log.info("short secret %s in a message", {SHORT!r})
    log.warning("database at postgresql+psycopg://kandev:hunter2@db.internal:5432/bot is down")
    response = httpx.Response(500, request=httpx.Request("GET", "https://ops:Tr0ub4dor@kandev.internal/x"))
    try:
        response.raise_for_status()
    except httpx.HTTPStatusError:
        log.exception("Kandev failed")
    log.error("no userinfo here: https://kandev.example.test/t/1 stays readable")
    """
)


@pytest.mark.fault("short secrets and credentials in URLs in logs", guarantee=10)
def test_short_secrets_and_url_credentials_are_redacted(reliability) -> None:
    result = subprocess.run(
        [sys.executable, "-c", URL_SCRIPT], capture_output=True, text=True, timeout=60
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for expected in (
        "short secret [redacted] in a message",
        "postgresql+psycopg://[redacted]@db.internal:5432/bot is down",
        "https://[redacted]@kandev.internal/x",  # in httpx's own exception message
        "https://kandev.example.test/t/1 stays readable",
    ):
        assert expected in output, (expected, output)
    for leaked in (SHORT, "hunter2", "Tr0ub4dor", "kandev:", "ops:"):
        assert leaked not in output, (leaked, output)
    reliability.record("short secrets and credentials in URLs in logs", guarantee=10, survived=True)
