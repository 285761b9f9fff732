"""Kandev personal access tokens are scrubbed from every output — log lines (message,
arguments, traceback), error texts, check findings — even when they are no configured secret
(the people's own tokens)."""

from __future__ import annotations

import io
import json
import logging

import pytest

from kandev_slack.commands.check import run_checks
from kandev_slack.commands.findings import Finding
from kandev_slack.config.settings import load_settings
from kandev_slack.ops.logs import JsonFormatter, RedactSecrets
from kandev_slack.ops.redaction import KANDEV_PAT, REDACTED, Redactor, redact

SECRET = "Ab3_-" + "q" * 38  # the 43 base64url characters Kandev mints
PAT = f"kandev_pat_0a1b2c3d_{SECRET}"
OTHER = "kandev_pat_DEADBEEF_" + "Z-_9" * 10 + "xyz"


@pytest.mark.parametrize(
    "text",
    [
        f"{PAT}",
        f"Authorization: Bearer {PAT}",
        f"GET /ws?token={PAT}&x=1",
        f'{{"token": "{PAT}"}}',
        f"('{PAT}',)",
        f"tokens {PAT},{OTHER}.",
        f"cut short: {PAT[:30]}",
        f"longer: {PAT}extra",
    ],
)
def test_anything_shaped_like_a_kandev_token_is_redacted_without_being_configured(
    text: str,
) -> None:
    out = Redactor()(text)
    assert "kandev_pat_" not in out and SECRET[:8] not in out and "Z-_9" not in out
    assert REDACTED in out
    assert redact(text, ["unrelated"]) == out


def test_the_rest_of_a_line_is_kept() -> None:
    assert Redactor()(f"Bearer {PAT} refused (401)") == f"Bearer {REDACTED} refused (401)"
    assert Redactor()(f"a,{PAT},b") == f"a,{REDACTED},b"
    # not a token: the prefix alone, or words that merely mention it
    for kept in ("kandev_pat_…", "KANDEV_TOKEN=kandev_pat_never", "kandev_pat_xyz_abc"):
        assert Redactor()(kept) == kept
    assert KANDEV_PAT.fullmatch(PAT)


def test_log_lines_never_show_a_person_s_token() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactSecrets(Redactor(["configured-secret"])))
    logger = logging.getLogger("kandev_slack.test_redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("Kandev refused %s for %s", PAT, "U0ANA")
        try:
            raise RuntimeError(f"401 with token {OTHER}")
        except RuntimeError:
            logger.exception("the click of %s failed", "U0ANA")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines[0]["message"] == f"Kandev refused {REDACTED} for U0ANA"
    assert "kandev_pat_" not in lines[1]["exception"] and REDACTED in lines[1]["exception"]
    assert "kandev_pat_" not in stream.getvalue()


def test_check_findings_never_carry_a_token() -> None:
    settings = load_settings(
        {"SLACK_BOT_TOKEN": "xoxb-1-2", "SLACK_SIGNING_SECRET": "s", "KANDEV_SLACK_CHANNEL": "C0A"}
    )

    class Leaky:
        """A Kandev whose error text quotes a person's token (as a proxy's page might)."""

        def probe(self):
            raise RuntimeError(f"proxy said: bad token {PAT}")

    [finding] = run_checks(settings, "http", Leaky(), slack=False)  # type: ignore[arg-type]
    assert finding == Finding(False, "kandev reachable", finding.detail)
    assert "kandev_pat_" not in finding.detail and REDACTED in finding.detail
