"""USE-CASE: personal notifications — ``/kandev-questions subscribe | unsubscribe |
subscriptions``, and a DM card for every new bundle a subscriber may answer.

A subscription names every new question (``all``), a Kandev workspace, or a task label. Each
waiting, posted card is looked at once (marked in the store, like reminders): for every
subscription made before the card that matches it and whose person may answer it (the route's
answerers), a DM card is recorded and its post enqueued in the same transaction. DM cards
are copies of the card: they answer through the same admission step and are edited with it.
In a route with ``notify_assignee = true`` the task's assignee in Kandev, when they linked
that Kandev account and may answer, gets one too (one DM card a person, subscribed or not).

Quiet hours (kandev_slack/usecases/followups/quiet.py) hold a DM card for one summary; calm DMs
(kandev_slack/core/timing/calm.py) gather a burst of them under one DM, decided in the claim's
transaction (:func:`gathering_writes` are the gathering's own writes).
"""

from __future__ import annotations

import logging
from dataclasses import KW_ONLY, dataclass
from typing import Literal

from kandev_slack.core.domain import Card, TaskInfo
from kandev_slack.core.outbox import (
    GATHER,
    GATHER_EDIT,
    POST_COPY,
    copy_post_key,
    gather_edit_key,
    gather_post_key,
)
from kandev_slack.core.timing.quiet import HeldRow
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevError
from kandev_slack.store import FollowupsRepository
from kandev_slack.store.cards.followups import NewCopy, OutboxRow
from kandev_slack.store.people.subscriptions import ScopeKind, Subscription
from kandev_slack.surfaces import subscriptions as words
from kandev_slack.usecases.followups.periodic import PeriodicWorker
from kandev_slack.usecases.followups.quiet import QuietRound, quiet_round
from kandev_slack.usecases.people import KandevPeople
from kandev_slack.usecases.views.listing import Reply
from kandev_slack.usecases.views.seeing import Seeing, Sight, unlimited

log = logging.getLogger(__name__)

VERBS = frozenset({"subscribe", "unsubscribe", "subscriptions"})
#: The longest workspace name or label accepted (code points).
MAX_VALUE = 100


@dataclass(frozen=True)
class SubscriptionCommand:
    verb: str  # subscribe | unsubscribe | subscriptions
    kind: ScopeKind | None = None  # None: unsubscribe from everything
    value: str = ""


#: What is wrong with a subcommand: words after ``subscriptions``, a value over
#: :data:`MAX_VALUE`, ``label:`` without a label (worded by kandev_slack.surfaces.subscriptions).
BadCommand = Literal["trailing", "too_long", "no_label"]


@dataclass(frozen=True)
class BadSubscription:
    problem: BadCommand


def parse_command(text: str) -> SubscriptionCommand | BadSubscription | None:
    """The subscription subcommand in what followed ``/kandev-questions``; None when it is
    not one (then it is a listing filter)."""
    first, _, rest = (text or "").strip().partition(" ")
    verb = first.casefold()
    if verb not in VERBS:
        return None
    rest = " ".join(rest.split())
    if verb == "subscriptions":
        if rest:
            return BadSubscription("trailing")
        return SubscriptionCommand(verb)
    if not rest:
        return SubscriptionCommand(verb, None if verb == "unsubscribe" else "all")
    if len(rest) > MAX_VALUE:
        return BadSubscription("too_long")
    if rest.casefold() == "all":
        return SubscriptionCommand(verb, "all")
    if rest.casefold().startswith("label:"):
        label = rest[len("label:") :].strip()
        if not label:
            return BadSubscription("no_label")
        return SubscriptionCommand(verb, "label", label)
    return SubscriptionCommand(verb, "workspace", rest)


def task_labels(task: TaskInfo) -> tuple[str, ...]:
    """The task's labels, when Kandev reports them (an older TaskInfo has none)."""
    return tuple(getattr(task, "labels", ()) or ())


def matches(sub: Subscription, card: Card) -> bool:
    """Whether ``card`` is a new bundle (asked after the subscription) the subscription covers."""
    if sub.created_at > card.created_at:
        return False
    if sub.kind == "all":
        return True
    wanted = sub.value.casefold()
    if sub.kind == "workspace":
        names = (card.task.workspace_name, card.task.workspace_id, card.workspace_id)
        return any(name and name.casefold() == wanted for name in names)
    return any(label.casefold() == wanted for label in task_labels(card.task))


def dm_key(pending_id: str, user_id: str) -> str:
    return f"dm:{pending_id}:{user_id}"


class SubscriptionService:
    """The subcommands and the App Home's remove button."""

    def __init__(self, followups: FollowupsRepository, kandev: KandevClient) -> None:
        self.followups = followups
        self.kandev = kandev

    def reply(self, command: SubscriptionCommand | BadSubscription, user_id: str) -> Reply:
        text = self._answer(command, user_id)
        return Reply(text=text, blocks=[])

    def _answer(self, command: SubscriptionCommand | BadSubscription, user_id: str) -> str:
        if isinstance(command, BadSubscription):
            return words.bad_command_message(command.problem, MAX_VALUE)
        if command.verb == "subscriptions":
            return words.list_message(self.followups.subscriptions_of(user_id))
        kind, value = command.kind, command.value
        if kind == "workspace" and command.verb == "subscribe":
            value, problem = self._workspace(value)
            if problem:
                return problem
        if command.verb == "subscribe" and kind is not None:
            new = self.followups.subscribe(user_id, kind, value)
            return words.subscribed_message(kind, value, new=new)
        if kind == "workspace":  # as subscribed: the name Kandev spells, in any case
            value = self._subscribed_name(user_id, value)
        return self.remove(user_id, kind, value)

    def remove(self, user_id: str, kind: ScopeKind | None, value: str) -> str:
        removed = self.followups.unsubscribe(user_id, kind, value)
        return words.unsubscribed_message(kind, value, removed)

    def _subscribed_name(self, user_id: str, value: str) -> str:
        for sub in self.followups.subscriptions_of(user_id):
            if sub.kind == "workspace" and sub.value.casefold() == value.casefold():
                return sub.value
        return value

    def _workspace(self, name: str) -> tuple[str, str]:
        """(the workspace's name as Kandev spells it, "") or (name, what to tell the person)."""
        try:
            workspaces = self.kandev.workspaces()
        except KandevError:
            return name, words.kandev_unreachable_message()
        wanted = name.casefold()
        for workspace in workspaces:
            if workspace.id == name or (workspace.name and workspace.name.casefold() == wanted):
                return workspace.name or workspace.id, ""
        return name, words.unknown_workspace_message(name, [w.name or w.id for w in workspaces])


def gathering_writes(gathering: str, joined: str) -> list[OutboxRow]:
    """A DM card ``joined`` a gathering DM (calm DMs, kandev_slack/core/timing/calm.py): the
    gathering's post (once) and the edit of its count."""
    user_id = gathering.split(":")[1]
    return [
        OutboxRow(GATHER, gather_post_key(gathering), {"key": gathering}, user_id),
        OutboxRow(GATHER_EDIT, gather_edit_key(gathering, joined), {"key": gathering}, user_id),
    ]


@dataclass(eq=False)
class SubscriptionNotifier(PeriodicWorker):
    """Decides, once per waiting card, which subscribers (and which assignee) get a DM card
    of it."""

    _: KW_ONLY
    #: What each subscriber's own Kandev account sees (issue 32): in routes that use it, no DM
    #: card of a workspace it cannot see, nor of what they hid in its Needs-you inbox. None:
    #: what the route lets them answer.
    seeing: Seeing | None = None
    #: Who a task's assignee is in Slack (None: assignees are never sent DM cards).
    people: KandevPeople | None = None

    component = "subscriptions"
    failing = "store error while sending DM cards"

    def work_once(self) -> int:
        """Decide every undecided card; returns how many DM cards were enqueued."""
        cards = self.followups.unnotified_posted()
        if not cards:
            return 0
        subs = self.followups.all_subscriptions()
        quiet = quiet_round(self.followups)
        sights: dict[str, Sight] = {}  # one per subscriber and round
        sent = 0
        for card in cards:
            sent += self._notify(card, subs, quiet, sights)
        if sent:
            self.publisher.wake()
        return sent

    def _sight(self, user_id: str, sights: dict[str, Sight]) -> Sight:
        if user_id not in sights:
            made = self.seeing.sight(user_id) if self.seeing is not None else unlimited(user_id)
            sights[user_id] = made
        return sights[user_id]

    def _notify(
        self, card: Card, subs: list[Subscription], quiet: QuietRound, sights: dict[str, Sight]
    ) -> int:
        route = self.answerers.route_of(card.task)
        # Who gets one, and the line above theirs: the assignee first (one DM card a person).
        chosen: dict[str, str] = {}
        if route is not None and route.notify_assignee and self.people is not None:
            assignee = self.people.assignee_of(card)
            if assignee is not None:
                chosen[assignee] = words.assignee_note(card.channel)
        for sub in subs:
            if sub.user_id not in chosen and matches(sub, card):
                chosen[sub.user_id] = words.dm_note(sub.kind, sub.value, card.channel)
        messages: list[NewCopy] = []
        writes: list[OutboxRow] = []
        held: list[HeldRow] = []
        route_quiet = route.followups.quiet if route is not None else None
        for user_id, note in chosen.items():
            try:
                allowed = self.answerers.may_answer(card.task, user_id, strict=True)
            except Exception:  # Slack cannot say now: decide this card at the next round
                log.warning("cannot tell who may answer %s yet; retrying", card.pending_id)
                return 0
            if not allowed:
                continue  # a DM card only for bundles this person may answer
            sight = self._sight(user_id, sights)
            if sight.unsure and sight.limits(card.task):
                log.warning("cannot tell what %s's Kandev account sees yet; retrying", user_id)
                return 0  # decided at the next round, when Kandev can say
            if not sight.sees(card.task) or sight.hidden_in_kandev(card):
                continue  # not in their Kandev account's view, or hidden in its inbox
            key = dm_key(card.pending_id, user_id)
            waits, rows = quiet.hold(
                key, user_id, card.pending_id, "dm", route_quiet, card.task.priority
            )
            held += rows
            if waits:
                continue  # in the summary when the quiet hours end
            messages.append(NewCopy(key, "dm", user_id, note))
            writes.append(
                OutboxRow(
                    POST_COPY,
                    copy_post_key(key),
                    {"pending_id": card.pending_id, "key": key},
                    user_id,
                )
            )
        if not self.followups.mark_notified(
            card.pending_id, messages, writes, held, gathered=gathering_writes
        ):
            return 0
        if messages:
            log.info("%d DM card(s) for %s", len(messages), card.pending_id)
        return len(messages)
