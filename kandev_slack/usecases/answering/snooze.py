"""Snooze (issue 22): a person hides a waiting question from their own App Home, listing and
DM cards for 1 h, 4 h or 24 h, and gets it back early (Unsnooze) or when the time is up.

Every change is one compare-and-set on the person's snooze as read
(kandev_slack/store/cards/snoozes.py),
with the edits of their DM cards (collapsed to "💤 Snoozed until …", or restored) enqueued in
the same transaction. When a snooze ends (the :class:`SnoozeWorker`, on every replica) it is
deleted once — the replica whose delete wins restores the DM cards and posts "⏰ Back from
snooze" in their threads; the others do nothing. Snoozes of resolved items are deleted.
Every change is audited (``snooze``, ``unsnooze``, ``snooze_ended``).

For a linked person in a route that uses their own Kandev account (issue 32), their Kandev
Needs-you inbox follows: a snooze there too, never shorter than the Slack one
(:func:`~kandev_slack.core.snooze.kandev_snooze`), cleared on Unsnooze and when the Slack snooze
ends (kandev_slack/usecases/views/seeing.py). The Slack snooze is made first; a Kandev failure
is logged and told (``Snoozed.inbox``), never undoes it.

The other way round, what a linked person snoozes or dismisses in Kandev's own Needs-you inbox
collapses the DM cards of it they already got (:meth:`Snoozes.follow_kandev`, a round of the
:class:`SnoozeWorker` every :data:`FOLLOW_S`): it is mirrored as their snooze, its token marked
as coming from Kandev (:data:`~kandev_slack.core.snooze.KANDEV_TOKEN`: never sent back to
Kandev), renewed while Kandev hides the item and ended — the DM cards restored — once Kandev
shows it again (un-snoozed there, or its Kandev snooze ran out). Only people holding DM cards of
waiting items in routes that use their account are read, each workspace's hidden items once
per person and round (cached by Seeing); a failure to read them changes nothing.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kandev_slack.core.domain import Card
from kandev_slack.core.outbox import COPY_REPLY, UPDATE_COPY, copy_update_key, reply_key
from kandev_slack.core.snooze import (
    HOUR_S,
    KANDEV_MIRROR_HOURS,
    KANDEV_TOKEN,
    Snooze,
    new_snooze,
)
from kandev_slack.ops.health import Health
from kandev_slack.store import CardsRepository, SnoozesRepository
from kandev_slack.store.cards.followups import OutboxRow
from kandev_slack.surfaces.snooze import back_text
from kandev_slack.usecases.answering.admission import Admitted
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.followups.periodic import INTERVAL_S, PeriodicLoop
from kandev_slack.usecases.identity import Acting
from kandev_slack.usecases.views.seeing import InboxStep, Seeing

log = logging.getLogger(__name__)

#: A second choice of the same length within this many seconds is the same snooze (a double
#: click, or a redelivery): nothing changes.
REPEAT_S = 10.0
_ATTEMPTS = 3
#: How often the DM cards follow what people hid in their Kandev inbox, in seconds.
FOLLOW_S = 5.0


@dataclass(frozen=True)
class Snoozed:
    """Snoozed until ``snooze.until`` (``again``: it already was, for that long); ``inbox``:
    how the person's Kandev Needs-you inbox followed (None: not theirs to change: a ``bot``
    route, or they are not linked)."""

    card: Card
    snooze: Snooze
    again: bool = False
    inbox: InboxStep | None = None


@dataclass(frozen=True)
class Unsnoozed:
    card: Card
    inbox: InboxStep | None = None  # as Snoozed.inbox


@dataclass(frozen=True)
class NotSnoozed:
    """Unsnooze on something the person has not snoozed (any more)."""

    card: Card


@dataclass(frozen=True)
class SnoozeContended:
    """The person's snooze changed elsewhere each time this change was tried."""

    card: Card


@dataclass(frozen=True)
class SnoozeRedelivered:
    """Slack's copy of a choice whose change is made already: nothing more is said."""

    card: Card


SnoozeResult = Snoozed | Unsnoozed | NotSnoozed | SnoozeContended | SnoozeRedelivered


@dataclass(eq=False)
class Snoozes:
    snoozes: SnoozesRepository
    copies: CardsRepository  # the card and its other messages (the person's DM cards)
    audit_log: Audit
    #: The publisher's wake-up (the DM card edits are in the outbox) and its "changed" (Home
    #: views are published again).
    wake: Callable[[], None]
    changed: Callable[[], None]
    _: KW_ONLY
    #: Seconds in a snooze hour (``SNOOZE_HOUR_S``: shorter in tests).
    hour_s: float = HOUR_S
    #: Keeps a linked person's Kandev Needs-you inbox in step (issue 32; None: never).
    seeing: Seeing | None = None

    def snooze(self, admitted: Admitted, hours: int) -> SnoozeResult:
        """Hide ``admitted.card`` from its person's views for ``hours``."""
        user, card = admitted.request.user_id, admitted.card
        for _ in range(_ATTEMPTS):
            now = self.snoozes.snooze_now()
            read = self.snoozes.snooze_of(user, card.pending_id)
            if read is not None and self._same(read, hours, now):
                if admitted.request.redelivery:
                    return SnoozeRedelivered(card)
                return Snoozed(card, read, again=True)
            token = uuid.uuid4().hex
            snooze = new_snooze(user, card.pending_id, hours, now, token, self.hour_s)
            edits = self._dm_edits(card, user, f"snooze:{token}")
            if self.snoozes.put_snooze(snooze, read.token if read else None, edits):
                self._audit(card, user, admitted.request.source, "snooze", f"{hours} h", "ok")
                # Made in Slack first: Kandev's inbox follows, and its failure loses nothing.
                inbox = self._in_kandev(card, "hide", self._kandev_hide(admitted, hours))
                self._changed()
                return Snoozed(card, snooze, inbox=inbox)
        return SnoozeContended(card)

    def unsnooze(self, admitted: Admitted) -> SnoozeResult:
        """Bring ``admitted.card`` back to its person's views now."""
        user, card = admitted.request.user_id, admitted.card
        for _ in range(_ATTEMPTS):
            read = self.snoozes.snooze_of(user, card.pending_id)
            if read is None:
                return SnoozeRedelivered(card) if admitted.request.redelivery else NotSnoozed(card)
            edits = self._dm_edits(card, user, f"unsnooze:{read.token}")
            if self.snoozes.end_snooze(user, card.pending_id, read.token, edits):
                self._audit(card, user, admitted.request.source, "unsnooze", read.token, "ok")
                inbox = self._in_kandev(card, "show", self._kandev_show(admitted))
                self._changed()
                return Unsnoozed(card, inbox=inbox)
        return SnoozeContended(card)

    def snoozed_ids(self, user_id: str) -> set[str]:
        """What the person has snoozed now (their listing and Home leave it out)."""
        return {s.pending_id for s in self.snoozes.snoozes_of(user_id)}

    def snoozes_of(self, user_id: str) -> list[Snooze]:
        return self.snoozes.snoozes_of(user_id)

    def end_due(self) -> int:
        """End every snooze whose time is up (its DM cards restored, "⏰ Back from snooze" in
        their threads) and delete those of resolved items — each once across replicas.
        Returns how many were ended."""
        ended = 0
        for snooze in self.snoozes.due_snoozes():
            card = self.copies.get(snooze.pending_id)
            waiting = card is not None and not card.state.terminal
            writes: list[OutboxRow] = []
            if waiting and card is not None:
                writes = self._dm_edits(card, snooze.user_id, f"wake:{snooze.token}")
                writes += self._back_notices(card, snooze)
            token = snooze.token
            if self.snoozes.end_snooze(snooze.user_id, snooze.pending_id, token, writes):
                result = "ok" if waiting else "resolved"
                log.info("the snooze of %s on %s ended", snooze.user_id, snooze.pending_id)
                self._audit_ended(snooze, result)
                if waiting and card is not None and self.seeing is not None:
                    if snooze.from_kandev:  # Kandev's inbox hid it: not Slack's to show there
                        ended += 1
                        continue
                    step = self.seeing.ended(snooze.user_id, card.task, card.pending_id)
                    self._in_kandev(card, "show", step)
                ended += 1
        if ended:
            self._changed()
        return ended

    def next_end_s(self) -> float | None:
        """Seconds until the soonest snooze ends (None: nobody snoozes anything)."""
        return self.snoozes.next_end_s()

    def follows_kandev(self) -> bool:
        """Whether :meth:`follow_kandev` has anyone to follow (someone links their account)."""
        return self.seeing is not None and self.seeing.identities.any_linking

    def follow_kandev(self) -> int:
        """Collapse the DM cards of what their holders hid in their Kandev Needs-you inbox, and
        restore them once Kandev shows it again (each change once across replicas). Returns
        how many snoozes were made, renewed or ended."""
        if not self.follows_kandev() or self.seeing is None:
            return 0
        holders: dict[str, list[Card]] = {}
        for card in self.copies.pending():
            if self.seeing.identities.mode_of(card.task) == "bot":
                continue
            for user in {c.target for c in self.copies.messages_of(card.pending_id) if c.ts}:
                if user.startswith(("U", "W")):  # a person's DM card, not a channel's copy
                    holders.setdefault(user, []).append(card)
        changed = 0
        for user, cards in holders.items():
            acting = self.seeing.identities.seeing(user)
            if acting.link is None:  # not linked, or their link is broken
                continue
            changed += self._follow(acting, user, cards)
        if changed:
            self._changed()
        return changed

    def _follow(self, acting: Acting[Any], user: str, cards: list[Card]) -> int:
        assert self.seeing is not None
        read: dict[str, frozenset[str] | None] = {}
        changed = 0
        for card in cards:
            workspace = card.task.workspace_id
            if workspace not in read:
                read[workspace] = self.seeing.hidden_read(acting, workspace)
                if read[workspace] is None:
                    log.warning("could not read a linked person's Kandev inbox; skipped")
            hidden = read[workspace]
            if hidden is None:
                continue
            changed += self._mirror(card, user, card.pending_id in hidden)
        return changed

    def _mirror(self, card: Card, user: str, hidden: bool) -> int:
        """One person's DM cards of ``card`` in step with their Kandev inbox (``hidden``)."""
        now = self.snoozes.snooze_now()
        read = self.snoozes.snooze_of(user, card.pending_id)
        if hidden:
            if read is not None and not read.from_kandev:
                return 0  # snoozed in Slack: collapsed already, Slack's snooze (and end) decide
            if read is not None and read.from_kandev and read.until - now > self._half_mirror():
                return 0
            token = KANDEV_TOKEN + uuid.uuid4().hex
            snooze = new_snooze(user, card.pending_id, KANDEV_MIRROR_HOURS, now, token, self.hour_s)
            edits = self._dm_edits(card, user, f"kandev-hide:{token}")
            if not self.snoozes.put_snooze(snooze, read.token if read else None, edits):
                return 0  # another replica made it
            action = "snooze" if read is None or not read.from_kandev else "snooze_renewed"
            self._audit(card, user, "kandev:inbox", action, "hidden in kandev", "ok")
            return 1
        if read is None or not read.from_kandev:
            return 0
        edits = self._dm_edits(card, user, f"kandev-show:{read.token}")
        if not self.snoozes.end_snooze(user, card.pending_id, read.token, edits):
            return 0
        self._audit(card, user, "kandev:inbox", "unsnooze", read.token, "ok")
        return 1

    def _half_mirror(self) -> timedelta:
        return timedelta(seconds=KANDEV_MIRROR_HOURS * self.hour_s / 2)

    # ---- internals -----------------------------------------------------------------------

    def _kandev_hide(self, admitted: Admitted, hours: int) -> InboxStep | None:
        if self.seeing is None:
            return None
        return self.seeing.hide(admitted.acting, admitted.card.pending_id, hours)

    def _kandev_show(self, admitted: Admitted) -> InboxStep | None:
        if self.seeing is None:
            return None
        return self.seeing.show(admitted.acting, admitted.card.pending_id)

    @staticmethod
    def _in_kandev(card: Card, change: str, step: InboxStep | None) -> InboxStep | None:
        """Log how a person's Kandev inbox followed their Slack snooze (the Slack snooze holds
        whatever Kandev said)."""
        if step == "refused":
            log.warning(
                "kandev inbox %s of %s: the person's token was refused", change, card.pending_id
            )
        elif step == "failed":
            log.warning(
                "kandev inbox %s of %s failed; the Slack snooze holds", change, card.pending_id
            )
        elif step == "in_step":
            log.info("kandev inbox %s of %s made", change, card.pending_id)
        return step

    def _same(self, read: Snooze, hours: int, now: datetime) -> bool:
        """``read`` holds, for ``hours``, and was set a moment ago: choosing again is the same."""
        recent = now - read.since(self.hour_s) < timedelta(seconds=REPEAT_S)
        return read.holds(now) and read.hours == hours and recent

    def _dm_edits(self, card: Card, user_id: str, reason: str) -> list[OutboxRow]:
        """The edits of ``user_id``'s DM cards of ``card`` (subscription and escalation DMs)."""
        return [
            OutboxRow(
                UPDATE_COPY,
                copy_update_key(card, copy.key, reason),
                {"pending_id": card.pending_id, "key": copy.key},
                copy.channel or copy.target,
            )
            for copy in self.copies.messages_of(card.pending_id)
            if copy.target == user_id
        ]

    def _back_notices(self, card: Card, snooze: Snooze) -> list[OutboxRow]:
        """ "⏰ Back from snooze" in the thread of each of the person's DM cards."""
        rows = []
        for copy in self.copies.messages_of(card.pending_id):
            if copy.target != snooze.user_id:
                continue
            key = f"snooze:{copy.key}:{snooze.token}"
            payload = {"pending_id": card.pending_id, "message": copy.key, "key": key}
            payload["text"] = back_text(card.task)
            rows.append(OutboxRow(COPY_REPLY, reply_key(key), payload, copy.channel or copy.target))
        return rows

    def _changed(self) -> None:
        self.wake()
        self.changed()

    def _audit(
        self, card: Card, user: str, source: str, action: str, detail: str, result: str
    ) -> None:
        try:
            self.audit_log.audit(card.pending_id, user, action, source, result, detail)
        except Exception:  # the change is made and shown; the audit line is what is lost
            log.exception("could not audit the %s of %s", action, card.pending_id)

    def _audit_ended(self, snooze: Snooze, result: str) -> None:
        try:
            self.audit_log.audit(
                snooze.pending_id, snooze.user_id, "snooze_ended", "bot", result, snooze.token
            )
        except Exception:
            log.exception("could not audit the end of a snooze of %s", snooze.pending_id)


@dataclass(eq=False)
class SnoozeWorker(PeriodicLoop):
    """Ends the snoozes whose time is up, every second, on every replica (once each), and
    every ``follow_s`` has the DM cards follow people's Kandev inboxes."""

    snoozes: Snoozes
    health: Health
    _: KW_ONLY
    interval_s: float = INTERVAL_S
    changes: Callable[[], int] | None = None
    component = "snoozes"
    failing = "store error while ending snoozes"

    #: Seconds between rounds that follow people's Kandev inboxes (:meth:`Snoozes.follow_kandev`).
    follow_s: float = FOLLOW_S
    _followed_at: float | None = field(default=None, init=False, repr=False)

    def work_once(self) -> int:
        done = self.snoozes.end_due()
        now = time.monotonic()
        if self._followed_at is None or now - self._followed_at >= self.follow_s:
            self._followed_at = now
            done += self.snoozes.follow_kandev()
        return done

    def next_due_s(self) -> float | None:
        due = self.snoozes.next_end_s()
        if self.snoozes.follows_kandev():
            followed = self._followed_at if self._followed_at is not None else -self.follow_s
            follow = max(followed + self.follow_s - time.monotonic(), 0.0)
            due = follow if due is None else min(due, follow)
        return due
