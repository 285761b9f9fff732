"""Identifiers shaped like Slack's: message timestamps, view ids, trigger ids, envelope ids."""

from __future__ import annotations

import secrets
import string
import threading
import time

_ID_ALPHABET = string.ascii_uppercase + string.digits


class TsClock:
    """Message timestamps ("1700000000.000100"), strictly increasing per channel."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_us: dict[str, int] = {}

    def next(self, channel: str) -> str:
        with self._lock:
            now_us = int(time.time() * 1_000_000)
            value = max(now_us, self._last_us.get(channel, 0) + 1)
            self._last_us[channel] = value
        return f"{value // 1_000_000}.{value % 1_000_000:06d}"


def slack_id(prefix: str, length: int = 10) -> str:
    """An upper-case id like Slack's ("V0A1B2C3D4")."""
    return prefix + "".join(secrets.choice(_ID_ALPHABET) for _ in range(length - len(prefix)))


def trigger_id() -> str:
    """Shaped like Slack's: "<digits>.<digits>.<hex>"."""
    return f"{secrets.randbelow(10**11)}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}"


def view_hash() -> str:
    return f"{int(time.time())}.{secrets.token_hex(4)}"


def short_block_id() -> str:
    """Slack fills a missing block_id / action_id with a short random string."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(5))


def envelope_id() -> str:
    return secrets.token_hex(4) + "-" + secrets.token_hex(2) + "-" + secrets.token_hex(6)


def event_id() -> str:
    return slack_id("Ev", 12)


def token() -> str:
    return secrets.token_urlsafe(16)
