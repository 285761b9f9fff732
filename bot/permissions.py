"""Who may answer a card: its route's answerers (user ids and user-group members).

One place for the rule, used by the admission step (every interaction) and by crash recovery
(an answer re-sent for a person who may no longer answer is not re-sent).
"""

from __future__ import annotations

import logging

from bot.domain import Card
from bot.routing import Route, Routing
from bot.slack_api.gateway import SlackGateway

log = logging.getLogger(__name__)


class Permissions:
    def __init__(self, routing: Routing, slack: SlackGateway) -> None:
        self.routing = routing
        self.slack = slack

    def route_of(self, card: Card) -> Route | None:
        return self.routing.route_for(card.workspace_id, card.task.workspace_name)

    def may_act(self, card: Card, user_id: str, *, strict: bool = False) -> bool:
        """Whether the card's route lets this user answer or reject it. A card without a route
        grants nobody. A user group whose members cannot be read counts as "not a member",
        unless ``strict``: then the error propagates (the caller retries later)."""
        route = self.route_of(card)
        if route is None:
            return False
        if not route.answerers or user_id in route.answerers:
            return True
        groups = {g for g in route.user_group_ids if self._member(g, user_id, strict=strict)}
        return route.may_answer(user_id, groups)

    def _member(self, group_id: str, user_id: str, *, strict: bool) -> bool:
        if strict:
            return user_id in self.slack.group_members(group_id)
        try:
            return user_id in self.slack.group_members(group_id)
        except Exception:  # a Slack failure must not grant access
            log.warning("members of %s unavailable; treating %s as not a member", group_id, user_id)
            return False
