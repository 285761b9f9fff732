"""USE-CASE: the Conversation view of a card: what the agent said and did before asking.

Reads the task's description and its session's last messages from Kandev, keeps those before
the question, adds earlier answers to the same question (from the store, same channel and
route) and hands the view model to the pure renderer (kandev_slack/surfaces/conversation.py).
Kandev
failing is never an exception here: the view says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from kandev_slack.config.routing import Routing
from kandev_slack.core.domain import Card, PastAnswer
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import (
    KandevAuthError,
    KandevError,
    KandevNotFoundError,
    KandevUnavailable,
)
from kandev_slack.kandev.models import SessionMessage, SessionMessages
from kandev_slack.ops.redaction import without_userinfo
from kandev_slack.surfaces.conversation import Conversation, Problem
from kandev_slack.usecases.past_answers import PastAnswers
from kandev_slack.usecases.views.waiting import Permalinks

#: Earlier answers to the same question, each with its card's permalink (when known).
Earlier = tuple[tuple[PastAnswer, str | None], ...]

log = logging.getLogger(__name__)

#: How many of the session's newest messages are read at most (pages of 100).
MAX_MESSAGES_READ = 500
_CLARIFICATION = "clarification_request"


def before_question(found: SessionMessages, pending_id: str) -> tuple[SessionMessage, ...]:
    """The messages older than the bundle's first question message (oldest first). When the
    question is not among the messages read, every message read except its own."""
    messages = found.messages
    for index, message in enumerate(messages):
        meta = message.metadata or {}
        if message.type == _CLARIFICATION and meta.get("pending_id") == pending_id:
            return messages[:index]
    return tuple(
        m
        for m in messages
        if not (m.type == _CLARIFICATION and (m.metadata or {}).get("pending_id") == pending_id)
    )


class ConversationService:
    def __init__(
        self,
        kandev: KandevClient,
        past: PastAnswers,
        routing: Routing,
        permalinks: Permalinks,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.kandev = kandev
        self.past = past
        self.routing = routing
        self.permalinks = permalinks
        self.clock = clock

    def of(self, card: Card) -> Conversation:
        """The Conversation view of ``card`` (never raises for Kandev's failures)."""
        earlier = self._earlier(card)
        try:
            task = self.kandev.task(card.task_id)
            if not card.session_id:
                return self._problem(card, "gone", earlier)
            found = self.kandev.session_messages(card.session_id, limit=MAX_MESSAGES_READ)
        except KandevNotFoundError:
            return self._problem(card, "gone", earlier)
        except KandevUnavailable as exc:
            log.warning("conversation of %s: Kandev unreachable: %s", card.pending_id, exc)
            return self._problem(card, "unreachable", earlier)
        except KandevAuthError as exc:
            log.error("conversation of %s: %s", card.pending_id, exc)
            return self._problem(card, "auth", earlier)
        except KandevError as exc:
            log.warning("conversation of %s not readable: %s", card.pending_id, exc)
            return self._problem(card, "failed", earlier)
        if not found.messages:  # a session Kandev does not know (any more) has no messages
            return self._problem(card, "gone", earlier)
        return Conversation(
            card=card,
            description=task.description,
            messages=before_question(found, card.pending_id),
            complete=found.complete,
            earlier=earlier,
        )

    def _problem(self, card: Card, problem: Problem, earlier: Earlier) -> Conversation:
        return Conversation(
            card=card,
            problem=problem,
            earlier=earlier,
            kandev_url=without_userinfo(self.kandev.base_url),
        )

    def _earlier(self, card: Card) -> Earlier:
        """Earlier answers to the same question, with links to their cards (from the store;
        the permalinks from Slack, remembered)."""
        route = self.routing.route_for(card.task)
        if route is None:
            return ()
        try:
            found = self.past.earlier(card.bundle, card.task, route)
        except Exception:  # the conversation is still worth showing without them
            log.exception("earlier answers of %s not readable", card.pending_id)
            return ()
        return tuple(
            (past, self.permalinks.get(past.channel, past.ts) if past.ts else None)
            for past in found
        )
