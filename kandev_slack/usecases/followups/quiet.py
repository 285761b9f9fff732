"""USE-CASE: quiet hours — what waits while it is quiet, its one summary when quiet hours
end, and ``/kandev-questions quiet``.

Quiet hours come from the route (``quiet_hours`` / ``quiet_tz`` in the routing file: they hold
the route's reminders, escalations and DM cards) and from each person (``/kandev-questions
quiet 19:00-08:00``, in their Slack time zone: they hold that person's DM cards and
escalations to them). When both apply, the later end counts.

A step due while it is quiet (a reminder, an escalation, a DM card) is claimed as usual, in one
transaction, but instead of its Slack writes a *held* row is stored for its target, with the
instant its window ends (kandev_slack/core/timing/quiet.py). A ``critical`` item goes through, and
is
also noted so that the summary counts it. :class:`QuietReleaser` claims, every
``QUIET_CHECK_S``, each target's due rows in one ``UPDATE`` and enqueues that target's one
summary in the same transaction: released once across replicas and restarts, posted through
the outbox like every other message (paced, retried, fenced).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from kandev_slack.config.routing import USER_ID
from kandev_slack.core.outbox import SUMMARY
from kandev_slack.core.timing.quiet import (
    HeldRow,
    QuietError,
    QuietHours,
    Released,
    is_critical,
    quiet_hours,
    release_at,
)
from kandev_slack.usecases.followups.periodic import PeriodicWorker

log = logging.getLogger(__name__)

#: Seconds between two looks for quiet hours that ended (``QUIET_CHECK_S``).
CHECK_S = 30.0
#: Released items are forgotten this long after their summary (the table stays small), looked
#: for every ``PURGE_EVERY_S``.
KEEP_RELEASED_S = 7 * 86400.0
PURGE_EVERY_S = 3600.0

#: What a held row stands for; ``passed``: a critical item that went through meanwhile (it
#: is only counted in the summary).
HeldWhat = Literal["reminder", "escalation", "dm", "passed"]


@dataclass(frozen=True)
class QuietRound:
    """One round's view of quiet hours: the database's now and everyone's own."""

    now: datetime
    people: dict[str, QuietHours] = field(default_factory=dict)

    def hold(
        self,
        key: str,
        target: str,
        pending_id: str,
        what: HeldWhat,
        route: QuietHours | None,
        priority: str | None,
    ) -> tuple[bool, list[HeldRow]]:
        """(whether the step waits, the rows to store with its claim). A person's own quiet
        hours count when ``target`` is a person."""
        person = self.people.get(target) if USER_ID.match(target) else None
        until = release_at(self.now, route, person)
        if until is None:
            return False, []
        if is_critical(priority):
            return False, [HeldRow(f"held:{key}", target, pending_id, "passed", until)]
        return True, [HeldRow(f"held:{key}", target, pending_id, what, until)]


class QuietStore(Protocol):
    """What quiet hours call on the store (kandev_slack.store.FollowupsRepository)."""

    def db_now(self) -> datetime: ...

    def quiet_people(self) -> dict[str, QuietHours]: ...


def quiet_round(store: QuietStore) -> QuietRound:
    return QuietRound(store.db_now(), store.quiet_people())


def summary_write(target: str, released: list[Released]) -> tuple[str, str, dict[str, Any]]:
    """The outbox write (kind, key, payload) of ``target``'s one summary of ``released``
    (keyed by its first released item: a release happens once, so does its summary)."""
    ids = list(dict.fromkeys(item.pending_id for item in released))
    key = f"summary:{target}:{released[0].key}"
    return SUMMARY, key, {"target": target, "pending_ids": ids}


@dataclass(eq=False)
class QuietReleaser(PeriodicWorker):
    """Releases what waited for quiet hours that ended: one summary per target."""

    component = "quiet"
    failing = "store error while releasing what waited for quiet hours"
    _purged_at: float | None = None

    def work_once(self) -> int:
        now = time.monotonic()
        if self._purged_at is None or now - self._purged_at >= PURGE_EVERY_S:
            self.followups.held_purge(KEEP_RELEASED_S)
            self._purged_at = now
        released = 0
        for target in self.followups.held_due():
            released += self._release(target)
        if released:
            self.publisher.wake()
        return released

    def _release(self, target: str) -> int:
        items = self.followups.release_held(target, lambda got: summary_write(target, got))
        if items:
            log.info("quiet hours over for %s: %d item(s) in one summary", target, len(items))
        return len(items)


# ---- /kandev-questions quiet -------------------------------------------------------------


@dataclass(frozen=True)
class QuietCommand:
    """``quiet`` (show), ``quiet off``, or ``quiet <range>``."""

    verb: Literal["show", "off", "set"]
    value: str = ""


def parse_quiet(text: str) -> QuietCommand | None:
    """The ``quiet`` subcommand in what followed ``/kandev-questions``; None when it is not."""
    first, _, rest = (text or "").strip().partition(" ")
    if first.casefold() != "quiet":
        return None
    rest = rest.strip()
    if not rest:
        return QuietCommand("show")
    if rest.casefold() == "off":
        return QuietCommand("off")
    return QuietCommand("set", rest)


@dataclass(frozen=True)
class QuietReply:
    """What ``/kandev-questions quiet`` did, for the presenter to word
    (kandev_slack.cards.views.quiet)."""

    outcome: Literal["shown", "set", "off", "bad", "no_tz"]
    hours: str | None = None
    tz: str | None = None
    problem: str = ""  # bad: QuietError.problem
    had: bool = False  # off: whether there were quiet hours to remove


class PeopleStore(Protocol):
    def quiet_of(self, user_id: str) -> QuietHours | None: ...

    def quiet_set(self, user_id: str, hours: QuietHours) -> None: ...

    def quiet_clear(self, user_id: str) -> bool: ...


class TimeZones(Protocol):
    def user_tz(self, user_id: str) -> str | None: ...


class QuietService:
    """A person's own quiet hours, in their Slack time zone (read when they set them)."""

    def __init__(self, store: PeopleStore, zones: TimeZones) -> None:
        self.store = store
        self.zones = zones

    def reply(self, command: QuietCommand, user_id: str) -> QuietReply:
        if command.verb == "show":
            hours = self.store.quiet_of(user_id)
            if hours is None:
                return QuietReply("shown")
            return QuietReply("shown", hours.text(), hours.tz)
        if command.verb == "off":
            return QuietReply("off", had=self.store.quiet_clear(user_id))
        try:
            tz = self.zones.user_tz(user_id)
        except Exception:  # Slack cannot say now: nothing is changed
            log.warning("cannot read the time zone of %s", user_id, exc_info=True)
            tz = None
        if tz is None:
            return QuietReply("no_tz")
        try:
            hours = quiet_hours(command.value, tz)
        except QuietError as exc:
            value = tz if exc.problem == "tz" else command.value
            return QuietReply("bad", hours=value, problem=exc.problem)
        self.store.quiet_set(user_id, hours)
        return QuietReply("set", hours.text(), hours.tz)
