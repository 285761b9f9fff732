"""What an agent is blocked on: the one *pending item* the kind-agnostic parts work on.

A card is the Slack face of a pending item: a clarification bundle (1–4 questions,
``ask_user_question_kandev``) or an approval, a tool-permission request
(``session/request_permission``). Routing, admission, the outbox, reminders and escalation,
subscriptions, the listing, the App Home and the audit key everything by the item's id and
read only what :class:`PendingItem` offers, so a new kind reuses them as they are.

What differs by kind — how an item is resolved and how it ended, what is checked before
sending, what its card offers — is its spec in kandev_slack/kinds/<kind>/, found through
kandev_slack/kinds/registry.py (``spec_of``); its renderers in kandev_slack/kinds/<kind>/cards/
(found by kandev_slack/cards/kinds.py), its discovery in kandev_slack/usecases/intake/
(discovery.py, approvals.py) and its Kandev calls in kandev_slack/kandev/.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable


class ItemKind(StrEnum):
    """The kinds of pending item (stored with a card, a label on metrics)."""

    QUESTION = "question"  # a clarification bundle (kandev_slack.core.clarification.Bundle)
    APPROVAL = "approval"  # a tool-permission request (kandev_slack.core.approval.Approval)


#: The kinds this release knows, as stored (``cards.kind``): a card of any other kind was written
#: by a newer release and is left alone (never ended, edited, reposted or purged; /healthz says
#: so).
KNOWN_KINDS: frozenset[str] = frozenset(kind.value for kind in ItemKind)


def known_kind(stored: str | None) -> ItemKind | None:
    """The kind a stored ``kind`` names, None for one this release does not know."""
    return ItemKind(stored) if stored in KNOWN_KINDS else None


@runtime_checkable
class PendingItem(Protocol):
    """The part of a pending item every kind has."""

    @property
    def kind(self) -> ItemKind: ...

    @property
    def item_id(self) -> str:
        """Kandev's id of the item (a bundle's ``pending_id``): unique, the key of its card."""
        ...

    @property
    def task_id(self) -> str: ...

    @property
    def session_id(self) -> str:
        """The session the agent asked in ("" when Kandev did not say)."""
        ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def headline(self) -> str:
        """What is asked, in one line of plain text (a reminder, a notification, a list row)."""
        ...
