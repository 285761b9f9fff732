"""A digest's post, as the use-case hands it to the store (kandev_slack/usecases/followups/
digests.py; kept apart so that the store can import it without the use-case's imports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DigestPost:
    """A digest's post (the outbox's ``post_digest``): to ``target`` (a user id: their DM; or
    a channel id), deduplicated by ``key``; ``message``: its text and blocks."""

    target: str
    key: str
    message: dict[str, Any]
