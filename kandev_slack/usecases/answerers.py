"""Who may answer a question, and so who may see it: its route's answerers.

One place for the rule, used by the admission step (every interaction), the listing and the
App Home (nobody sees a question they may not answer) and crash recovery (an answer re-sent for
a person who may no longer answer is not re-sent).

- A question whose route cannot be determined grants nobody.
- A route with answerers (user ids, user groups) grants exactly them, of any organisation.
- A route without answerers grants the members of its channel (public or private alike: a
  guest, or anyone of the workspace, who is not in the channel is not granted) who belong to
  the app's own organisation (a Slack Connect member of a shared channel is not). A click on
  the card's message itself proves nothing: whoever can read a message can click it, and
  anyone of the workspace can read a public channel without joining it. A person's
  organisation is what Slack's signed payload names (``user.team_id``) when that is the app's
  own team or grid, else what Slack says of them (users.info).

Anything that cannot be looked up (a group's members, a channel's members, a person's
organisation) counts as "no" (fail closed), unless ``strict``: then the error propagates (the
caller retries later, or tells the person it could not be checked).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from kandev_slack.config.routing import Route, RouteInputs, Routing
from kandev_slack.core.claims import DEFAULT_CLAIM_FOR_S
from kandev_slack.core.domain import Card, TaskInfo

log = logging.getLogger(__name__)

_T = TypeVar("_T")


class Directory(Protocol):
    """Who is in what (the Slack Web API gateway); each raises when Slack cannot say."""

    def group_members(self, group_id: str) -> frozenset[str]: ...
    def is_channel_member(self, channel: str, user_id: str) -> bool: ...
    def of_own_organisation(self, user_id: str) -> bool: ...
    def own_organisation(self) -> tuple[str, str | None]: ...


class Answerers:
    def __init__(self, routing: Routing, slack: Directory) -> None:
        self.routing = routing
        self.slack = slack

    def route_of(self, task: TaskInfo) -> Route | None:
        return self.routing.route_for(task)

    def claim_for(self, card: Card) -> float:
        """How long "I'm on it" holds ``card`` (its route's ``claim_for``, else the default)."""
        route = self.route_of(card.task)
        return route.followups.claim_for if route is not None else DEFAULT_CLAIM_FOR_S

    def may_answer_card(
        self, card: Card, user_id: str, *, strict: bool = False, team: str = ""
    ) -> bool:
        """Whether this user may answer or reject ``card``; ``team``: theirs, as a payload
        Slack signed names it ("": unknown)."""
        return self.may_answer(card.task, user_id, strict=strict, team=team)

    def may_answer(
        self, task: TaskInfo, user_id: str, *, strict: bool = False, team: str = ""
    ) -> bool:
        """Whether this user may answer (and so see) a question of ``task``; ``team``: theirs,
        as a payload Slack signed names it ("": unknown)."""
        route = self.route_of(task)
        if route is None:
            return False
        if route.answerers:
            if user_id in route.answerers:
                return True
            groups = {g for g in route.user_group_ids if self._member(g, user_id, strict=strict)}
            return route.may_answer(user_id, groups)
        if not self._of_own_organisation(user_id, team, strict=strict):
            return False
        return self._in_channel(route.channel, user_id, strict=strict)

    def answerable(
        self, items: Iterable[_T], user_id: str, task: Callable[[_T], TaskInfo]
    ) -> list[_T]:
        """The ``items`` (each of ``task(item)``) this user may answer, in their order, as
        :meth:`may_answer` judges each: judged once per distinct route input (workspace,
        labels, priority), not once per item. A listing of 1,000 waiting questions spread
        over a few routes asks a few times, not 1,000 (each judgement builds a route and may
        look the person up)."""
        verdicts: dict[RouteInputs, bool] = {}
        mine = []
        for item in items:
            of = task(item)
            key = self.routing.inputs_of(of)
            verdict = verdicts.get(key)
            if verdict is None:
                verdict = verdicts[key] = self.may_answer(of, user_id)
            if verdict:
                mine.append(item)
        return mine

    def _member(self, group_id: str, user_id: str, *, strict: bool) -> bool:
        return self._lookup(
            lambda: user_id in self.slack.group_members(group_id),
            f"members of {group_id}",
            strict=strict,
        )

    def _of_own_organisation(self, user_id: str, team: str, *, strict: bool) -> bool:
        def check() -> bool:
            # Slack names the app's own team or grid: no look-up (a crowd's first clicks
            # would each wait for one). Anything else is asked of Slack: another workspace
            # of the same grid is the app's organisation too.
            if team and team in self.slack.own_organisation():
                return True
            return self.slack.of_own_organisation(user_id)

        return self._lookup(
            check,
            f"the organisation of {user_id}",
            strict=strict,
        )

    def _in_channel(self, channel: str, user_id: str, *, strict: bool) -> bool:
        return self._lookup(
            lambda: self.slack.is_channel_member(channel, user_id),
            f"the members of {channel}",
            strict=strict,
        )

    @staticmethod
    def _lookup(check: Callable[[], object], what: str, *, strict: bool) -> bool:
        if strict:
            return bool(check())
        try:
            return bool(check())
        except Exception:  # a Slack failure must not grant access
            log.warning("%s unavailable; treating the person as not allowed", what)
            return False
