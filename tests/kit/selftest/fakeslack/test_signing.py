"""The driver signs like Slack: slack_sdk's SignatureVerifier accepts it, and only it."""

from __future__ import annotations

from slack_sdk.signature import SignatureVerifier

from kandev_slack.kits.fakeslack import signed_headers

SECRET = "s3cr3t"
BODY = b"payload=%7B%22type%22%3A%22block_actions%22%7D"


def test_valid_signature_verifies() -> None:
    assert SignatureVerifier(SECRET).is_valid_request(BODY, signed_headers(SECRET, BODY))


def test_stale_forged_and_missing_signatures_do_not() -> None:
    verifier = SignatureVerifier(SECRET)
    for mode in ("stale", "forged", "missing"):
        assert not verifier.is_valid_request(BODY, signed_headers(SECRET, BODY, mode)), mode


def test_signature_covers_the_body() -> None:
    headers = signed_headers(SECRET, BODY)
    assert not SignatureVerifier(SECRET).is_valid_request(BODY + b"x", headers)
