"""Signing requests the way Slack does (v0 HMAC-SHA256), with ways to get it wrong on purpose."""

from __future__ import annotations

import time
from typing import Literal

from slack_sdk.signature import SignatureVerifier

SignatureMode = Literal["valid", "stale", "forged", "missing"]
STALE_BY_SECONDS = 600  # Bolt (like Slack's docs) rejects anything older than 300 s


def signed_headers(
    signing_secret: str,
    body: bytes,
    mode: SignatureMode = "valid",
    now: float | None = None,
) -> dict[str, str]:
    """X-Slack-Request-Timestamp and X-Slack-Signature for `body`.

    `stale`: correctly signed but 10 minutes old; `forged`: signed with another secret;
    `missing`: no signature header at all.
    """
    timestamp = int(now if now is not None else time.time())
    if mode == "stale":
        timestamp -= STALE_BY_SECONDS
    secret = signing_secret if mode != "forged" else signing_secret + "-not-the-real-one"
    signature = SignatureVerifier(secret).generate_signature(timestamp=str(timestamp), body=body)
    headers = {"X-Slack-Request-Timestamp": str(timestamp)}
    if mode != "missing" and signature is not None:
        headers["X-Slack-Signature"] = signature
    return headers
