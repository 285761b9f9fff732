"""The outbox's keys: one kind per message a bundle has in Slack (its card, its other
messages, replies in their threads) and one key per write, so that each is made once however
many replicas take it (kandev_slack/usecases/outbox/writes.py carries them out)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kandev_slack.core.domain import Card, CardState

POST = "post"
UPDATE = "update"
#: A bundle's other messages (escalation card, DM card): their post and their edits.
POST_COPY = "post_copy"
UPDATE_COPY = "update_copy"
#: A reply in the thread of a bundle's channel card (a reminder, an escalation notice).
REPLY = "reply"
#: A reply in the thread of one of its other messages ("Back from snooze" in a DM card's).
COPY_REPLY = "copy_reply"
#: Writes of no one card (kandev_slack/usecases/followups/quiet.py): the summary of what waited
#: for quiet hours, and a gathering DM's post and count (calm DMs).
SUMMARY = "summary"
GATHER = "gather"
GATHER_EDIT = "gather_edit"


def gather_post_key(gathering: str) -> str:
    return f"post:{gathering}"


def gather_edit_key(gathering: str, joined: str) -> str:
    """One edit of a gathering DM's count per DM card that joined it."""
    return f"edit:{gathering}:{joined}"


#: A digest (kandev_slack/usecases/followups/digests.py): a message of its own, not a card's.
POST_DIGEST = "post_digest"
#: How the reason of an edit for a change of the card's group starts
#: (kandev_slack/usecases/answering/groups.py).
GROUP_REASON = "group:"
#: ``last_error`` values that prove an earlier take of a post did not reach Slack.
NOT_SENT = ("", "paced", "ratelimited")


def update_key(card: Card, reason: str = "") -> str:
    """The outbox key of the edit of ``card`` to its current state (one edit per state, and
    one more per ``reason`` such as a corrected attribution)."""
    return _update_key(card.pending_id, card.state, reason)


def _update_key(pending_id: str, state: CardState, reason: str) -> str:
    key = f"update:{pending_id}:{state.value}"
    return f"{key}:{reason}" if reason else key


def is_group_edit(key: str, pending_id: str) -> bool:
    """Whether ``key`` is an edit of that card for a change of its group (made while it
    waited: once it has ended, its outcome's own edit shows it)."""
    return key.startswith(_update_key(pending_id, CardState.PENDING, GROUP_REASON))


def group_line_prefix(key: str, pending_id: str) -> str | None:
    """What the keys of the edits of that card's group line in the same state as ``key``'s
    start with, when ``key`` is one (None: an edit of the card's own state, or no edit): one
    edit of the card to its current state covers them all."""
    head = f"update:{pending_id}:"
    if not key.startswith(head):
        return None
    state, _, reason = key[len(head) :].partition(":")
    return f"{head}{state}:{GROUP_REASON}" if reason.startswith(GROUP_REASON) else None


def copy_update_key(card: Card, message_key: str, reason: str = "") -> str:
    """The outbox key of the edit of one of ``card``'s other messages to its current state."""
    return f"{update_key(card, reason)}:copy:{message_key}"


def copy_post_key(message_key: str) -> str:
    return f"post_copy:{message_key}"


def reply_key(key: str) -> str:
    return f"reply:{key}"


def digest_key(target: str, local_date: str) -> str:
    """The outbox key of the digest of ``target`` (a person or a channel) for a local date."""
    return f"digest:{target}:{local_date}"


@dataclass(frozen=True)
class DigestPost:
    """A digest's post (the outbox's ``post_digest``): to ``target`` (a user id: their DM; or
    a channel id), deduplicated by ``key``; ``message``: its text and blocks."""

    target: str
    key: str
    message: dict[str, Any]
