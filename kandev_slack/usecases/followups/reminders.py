"""USE-CASE: make sure someone answers — reminders and escalation of waiting cards.

Every ``interval_s`` the worker reads the waiting, posted cards with their follow-up state and
the database's now (so every replica measures ages with the same clock), and for each card
whose route asks for it (by its *follow-up age*: its age less the time someone was on it,
"I'm on it" — see kandev_slack/core/claims.py):

- a **reminder** when one is due: the card is moved to the latest due step in one claim (a
  reminder due several times while the bot was down is sent once, not once per missed step).
  It mentions the route's ``mention``; in a route with ``notify_assignee = true`` whose task
  is assigned in Kandev to someone who linked that account and may answer, it mentions that
  person instead (the one the task is waiting on), whoever is assigned when it is due;
- an **escalation** once it is old enough: the escalation card (a copy of the card, in the
  target channel or the target person's DM) and the notice in the channel card's thread.

Claims check, in the same transaction, that the card is still waiting, and enqueue the Slack
writes in the outbox with them (see kandev_slack/store/cards/followups.py): each step happens once
across
replicas and restarts, and the outbox paces the posts like every other one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from kandev_slack.config.followups import FollowUps
from kandev_slack.config.routing import Route
from kandev_slack.core.claims import followup_age
from kandev_slack.core.domain import Card
from kandev_slack.core.outbox import POST_COPY, REPLY, copy_post_key, reply_key
from kandev_slack.kinds.registry import spec_of
from kandev_slack.store.cards.followups import NewCopy, OutboxRow, Waiting
from kandev_slack.surfaces.followups import escalated_reply, escalation_note, reminder_text
from kandev_slack.usecases.followups.periodic import PeriodicWorker
from kandev_slack.usecases.followups.quiet import QuietRound, quiet_round
from kandev_slack.usecases.people import KandevPeople

log = logging.getLogger(__name__)

#: Seconds between two looks at the waiting cards.


def escalation_key(pending_id: str) -> str:
    return f"escalation:{pending_id}"


@dataclass(eq=False)
class FollowUpWorker(PeriodicWorker):
    #: Lets the claims ("I'm on it") that ran out lapse
    #: (kandev_slack/usecases/answering/claims.py); how many.
    lapse: Callable[[], int] | None = None
    #: Seconds until the soonest claim runs out (None: nobody is on anything).
    next_lapse: Callable[[], float | None] | None = field(default=None, kw_only=True)
    #: Who a task's assignee is in Slack (None: reminders mention only the route's ``mention``).
    people: KandevPeople | None = field(default=None, kw_only=True)
    component = "followups"
    failing = "store error while checking reminders"

    def work_once(self) -> int:
        """Claim every due step (after letting claims that ran out lapse: their cards'
        follow-ups resume); returns how many were claimed."""
        lapsed = self.lapse() if self.lapse is not None else 0
        return lapsed + self._follow_ups()

    def next_due_s(self) -> float | None:
        if self.answerers.routing.any_followups:
            return 0.0  # reminders age with the clock: a look every interval
        if self.lapse is None:
            return None
        return self.next_lapse() if self.next_lapse is not None else 0.0

    def _follow_ups(self) -> int:
        if not self.answerers.routing.any_followups:
            return 0  # nothing to do: the waiting cards are not read every second for nothing
        waiting = self.followups.waiting_posted()
        if not waiting:
            return 0
        quiet = quiet_round(self.followups)
        claimed = sum(self._follow_up(item, quiet) for item in waiting)
        if claimed:
            self.publisher.wake()
        return claimed

    def _follow_up(self, item: Waiting, quiet: QuietRound) -> int:
        route = self.answerers.route_of(item.card.task)
        if route is None:
            return 0
        followups = route.followups
        card = item.card
        # A card someone is on ("I'm on it") does not age for its follow-ups meanwhile.
        age = followup_age(card.created_at, quiet.now, card.paused_s, card.claim)
        claimed = 0
        step = followups.reminders_due(age)
        if step > item.reminders_sent and self._remind(item, step, route, quiet):
            claimed += 1
        if (
            not item.escalated
            and followups.escalation_due(age)
            and self._escalate(item, followups, quiet)
        ):
            claimed += 1
        return claimed

    def _remind(self, item: Waiting, step: int, route: Route, quiet: QuietRound) -> bool:
        card, followups = item.card, route.followups
        key = f"remind:{card.pending_id}:{step}"
        waits, held = quiet.hold(
            key, card.channel, card.pending_id, "reminder", followups.quiet, card.task.priority
        )
        question = spec_of(card).markdown_headline  # Markdown; an approval's is literal
        text = reminder_text(
            followups.reminder_age(step),
            self._mention(card, route),
            card.item.headline,
            markdown=question,
        )
        write = OutboxRow(
            REPLY,
            reply_key(key),
            {"pending_id": card.pending_id, "key": key, "text": text},
            card.channel,
        )
        writes = [] if waits else [write]
        if not self.followups.advance_reminder(card.pending_id, step, writes, held):
            return False
        log.info("reminder %d of %s is due%s", step, card.pending_id, _held(waits))
        return True

    def _mention(self, card: Card, route: Route) -> tuple[str, ...]:
        """Who a reminder notifies: the task's assignee (a route with ``notify_assignee``,
        linked, allowed to answer it: never fails, an unknown counts as no), else the route's
        ``mention``."""
        if route.notify_assignee and self.people is not None:
            assignee = self.people.assignee_of(card)
            if assignee is not None and self.answerers.may_answer(card.task, assignee):
                return (assignee,)
        return route.followups.mention

    def _escalate(self, item: Waiting, followups: FollowUps, quiet: QuietRound) -> bool:
        card = item.card
        target = followups.escalate_to or ""
        key = escalation_key(card.pending_id)
        waits, held = quiet.hold(
            key, target, card.pending_id, "escalation", followups.quiet, card.task.priority
        )
        note = escalation_note(card.channel, followups.escalate_mention)
        notice = f"escalated:{card.pending_id}"
        writes = [
            OutboxRow(
                POST_COPY, copy_post_key(key), {"pending_id": card.pending_id, "key": key}, target
            ),
            OutboxRow(
                REPLY,
                reply_key(notice),
                {"pending_id": card.pending_id, "key": notice, "text": escalated_reply(target)},
                card.channel,
            ),
        ]
        message = NewCopy(key, "escalation", target, note)
        messages = [] if waits else [message]
        if waits:
            writes = []
        if not self.followups.mark_escalated(card.pending_id, messages, writes, held):
            return False
        log.info("escalating %s to %s%s", card.pending_id, target, _held(waits))
        return True


def _held(waits: bool) -> str:
    return " (held for quiet hours)" if waits else ""
