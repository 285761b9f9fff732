"""USE-CASE: digests (issue 33) — ``/kandev-questions digest 09:00 | off | now`` and a route's
``digest`` / ``digest_tz`` keys.

A person's digest is a DM, on weekdays at their time in their Slack time zone (users.info →
``tz``), listing what waits that they may answer (the listing's rule: kandev_slack/usecases/
answerers.py), grouped by workspace, most urgent first; identical items waiting in one channel
are one row, as in the listing (:func:`digest_rows`). A route's channel digest
lists, in its channel, what waits there. Nothing is sent when nothing waits.

The :class:`DigestWorker` looks every ``DIGEST_CHECK_S`` seconds, on every replica, for digests
due (kandev_slack/core/timing/digest.py: wall-clock time in the zone, the local date). Each is
claimed
by a row per (target, local date) inserted atomically with its post's outbox row
(kandev_slack/store/people/digests.py): of several replicas, or after a restart, one sends it.
The post goes through the outbox (paced, retried on Slack's rate limits).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal, Protocol

from kandev_slack.config.routing import ChannelDigest, Routing
from kandev_slack.core.groups import GroupPlace
from kandev_slack.core.outbox import DigestPost, digest_key
from kandev_slack.core.timing.digest import (
    DEFAULT_TZ,
    MAX_DIGEST_ITEMS,
    DigestAnswer,
    Render,
    Scope,
    due_date,
    next_send,
    parse_time_of_day,
    zone,
)
from kandev_slack.ops.health import Health
from kandev_slack.usecases.followups.periodic import PeriodicLoop
from kandev_slack.usecases.views.listing import most_urgent_first, urgency_rank
from kandev_slack.usecases.views.waiting import WaitingQueue, group_rows

log = logging.getLogger(__name__)

VERB = "digest"
#: How often the worker looks for digests due (``DIGEST_CHECK_S``).
CHECK_S = 30.0

#: How many claimed digests the worker remembers (then it asks the store again).
_REMEMBERED = 10_000


@dataclass(frozen=True)
class DigestCommand:
    """``digest`` (show), ``digest 09:00`` (set), ``digest off``, ``digest now``."""

    action: Literal["show", "set", "off", "now"]
    at: str = ""


@dataclass(frozen=True)
class BadDigest:
    """``digest 25:00``, ``digest 9``, ``digest tomorrow``: what was typed."""

    typed: str


def parse_digest(text: str) -> DigestCommand | BadDigest | None:
    """The digest subcommand in what followed ``/kandev-questions``; None when it is not one."""
    first, _, rest = (text or "").strip().partition(" ")
    if first.casefold() != VERB:
        return None
    rest = " ".join(rest.split())
    if not rest:
        return DigestCommand("show")
    if rest.casefold() in ("off", "now"):
        return DigestCommand("off" if rest.casefold() == "off" else "now")
    at = parse_time_of_day(rest)
    if at is None:
        return BadDigest(rest)
    return DigestCommand("set", f"{at.hour:02d}:{at.minute:02d}")


class DigestStore(Protocol):
    """The digests' repository (kandev_slack/store/people/digests.py)."""

    def digest_of(self, user_id: str) -> Any: ...
    def digest_settings(self) -> Sequence[Any]: ...
    def set_digest(self, user_id: str, at: str, set_at: datetime) -> None: ...
    def clear_digest(self, user_id: str) -> bool: ...
    def digest_sent(self, target: str, local_date: str) -> bool: ...
    def claim_digest(
        self, target: str, local_date: str, items: int, post: DigestPost | None
    ) -> bool: ...
    def enqueue_digest(self, post: DigestPost) -> bool: ...


class TimeZones(Protocol):
    """A person's time zone (the Slack gateway: users.info → ``user.tz``); raises when Slack
    cannot say."""

    def user_tz(self, user_id: str) -> str | None: ...


@dataclass(frozen=True)
class _Due:
    target: str  # a user id (a DM) or a channel id
    local_date: date
    scope: Scope


@dataclass(eq=False)
class Digests:
    """The subcommand's answers, and building and enqueueing the digests due."""

    digests: DigestStore
    queue: WaitingQueue
    routing: Routing
    zones: TimeZones
    #: The publisher's wake-up (digests are posted by the outbox).
    wake: Callable[[], None]
    render: Render
    _: KW_ONLY
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    #: The ids a person snoozed: left out of their digest, as of their listing.
    snoozed: Callable[[str], set[str]] | None = None
    #: (target, local date) known to be claimed (here or elsewhere): not read again.
    _claimed: set[tuple[str, date]] = field(default_factory=set, init=False, repr=False)

    # ---- the subcommand ------------------------------------------------------------------

    def answer(self, command: DigestCommand | BadDigest, user_id: str) -> DigestAnswer:
        if isinstance(command, BadDigest):
            return DigestAnswer("bad", typed=command.typed)
        if command.action == "off":
            return DigestAnswer("off" if self.digests.clear_digest(user_id) else "not_set")
        if command.action == "now":
            return self._send_now(user_id)
        tz_name = self._tz_name(user_id)
        if command.action == "show":
            setting = self.digests.digest_of(user_id)
            if setting is None:
                return DigestAnswer("not_set")
            return DigestAnswer("setting", at=setting.at, tz=tz_name)
        now = self.clock()
        self.digests.set_digest(user_id, command.at, now)
        at = parse_time_of_day(command.at)
        tz = zone(tz_name) or zone(DEFAULT_TZ)
        if at is None or tz is None:  # parse_digest made it; UTC always exists
            return DigestAnswer("bad", typed=command.at)
        next_at = next_send(now, at, tz)
        return DigestAnswer("set", at=command.at, tz=tz_name, next_at=next_at)

    def _tz_name(self, user_id: str) -> str:
        try:
            name = self.zones.user_tz(user_id)
        except Exception:  # Slack cannot say now: the setting still holds, UTC is shown
            log.warning("cannot read the time zone of %s", user_id)
            name = None
        return name if zone(name) is not None and name else DEFAULT_TZ

    def _send_now(self, user_id: str) -> DigestAnswer:
        try:
            waiting = self.queue.waiting()
        except Exception as exc:  # Kandev cannot list what waits (unreachable, refused…)
            log.warning("digest now: Kandev cannot list what waits: %s", exc)
            return DigestAnswer("unavailable")
        items = self.person_items(user_id, waiting)
        if not items:
            return DigestAnswer("nothing")
        now = self.clock()
        # one per minute: Slack's redelivered command (or a double) sends it once
        key = f"{digest_key(user_id, 'now')}:{now:%Y-%m-%dT%H:%M}"
        self.digests.enqueue_digest(self._post(user_id, key, "person", items, now))
        self.wake()
        return DigestAnswer("sent", count=len(items))

    # ---- what a digest lists -------------------------------------------------------------

    def person_items(
        self, user_id: str, waiting: Sequence[Any], *, strict: bool = False
    ) -> list[Any]:
        """What waits that this person may answer (not what they snoozed), most urgent first.
        ``strict``: a membership Slack cannot tell now raises (the digest is decided at the
        next round) instead of leaving the item out."""
        if strict:
            may = self.queue.answerers.may_answer
            mine = [i for i in waiting if may(i.task, user_id, strict=True)]
        else:
            mine = self.queue.visible_to(user_id, waiting)
        if mine:  # what their own Kandev account sees and did not hide there (issue 32)
            sight = self.queue.sight_of(user_id)
            mine = sight.unhidden(sight.visible(mine))
        hidden = self.snoozed(user_id) if self.snoozed is not None and mine else set()
        return most_urgent_first([it for it in mine if it.pending_id not in hidden])

    def channel_items(self, channel: str, waiting: Sequence[Any]) -> list[Any]:
        """What waits whose route posts in ``channel``, most urgent first."""
        found = []
        for item in waiting:
            route = self.routing.route_for(item.task)
            if route is not None and route.channel == channel:
                found.append(item)
        return most_urgent_first(found)

    def _post(
        self,
        target: str,
        key: str,
        scope: Scope,
        items: Sequence[Any],
        now: datetime,
        *,
        strict: bool = False,
    ) -> DigestPost:
        """The digest of ``items`` (most urgent first): identical items waiting in one channel
        as one row (:func:`digest_rows`), the first rows shown — each with its first card's
        link, read now; the others of a row are only counted — and every item counted.
        ``strict``: a link Slack may give later (rate limited) raises rather than being left
        out (a scheduled digest is then decided at the next round)."""
        rows = digest_rows(items, self.queue.places())
        shown = self.queue.shown(rows[:MAX_DIGEST_ITEMS], members=False, strict=strict)
        return DigestPost(target, key, self.render(scope, shown, len(items), now))

    # ---- the worker's round --------------------------------------------------------------

    def send_due(self) -> int:
        """Claim and enqueue every digest due now (once per target and local date across
        replicas); returns how many were enqueued."""
        now = self.clock()
        due = [*self._people_due(now), *self._channels_due(now)]
        if not due:
            return 0
        waiting = self.queue.waiting()  # raises when Kandev cannot say: the next round retries
        sent = 0
        for one in due:
            if one.scope == "person":
                try:
                    items = self.person_items(one.target, waiting, strict=True)
                except Exception:  # Slack cannot tell who may answer now: the next round
                    log.warning("cannot tell what %s may answer yet; retrying", one.target)
                    continue
            else:
                items = self.channel_items(one.target, waiting)
            day = one.local_date.isoformat()
            key = digest_key(one.target, day)
            post: DigestPost | None = None
            try:
                if items:
                    post = self._post(one.target, key, one.scope, items, now, strict=True)
            except Exception as exc:  # a link Slack gives later (rate limited): next round
                log.warning("cannot build the digest of %s yet (%s); retrying", one.target, exc)
                continue
            claimed = self.digests.claim_digest(one.target, day, len(items), post)
            self._known_claimed(one.target, one.local_date)
            if claimed and post:
                log.info("digest of %s for %s: %d item(s)", one.target, day, len(items))
                sent += 1
        if sent:
            self.wake()
        return sent

    def _people_due(self, now: datetime) -> list[_Due]:
        found = []
        for setting in self.digests.digest_settings():
            at = parse_time_of_day(setting.at)
            try:
                tz = zone(self.zones.user_tz(setting.user_id)) or zone(DEFAULT_TZ)
            except Exception:  # Slack cannot say now: this person's digest waits a round
                log.warning("cannot read the time zone of %s; retrying", setting.user_id)
                continue
            if at is None or tz is None:
                continue
            day = due_date(now, at, tz, since=setting.set_at)
            if day is not None and not self._sent(setting.user_id, day):
                found.append(_Due(setting.user_id, day, "person"))
        return found

    def _channels_due(self, now: datetime) -> list[_Due]:
        found = []
        for digest in self.routing.channel_digests():
            day = _channel_day(digest, now)
            if day is not None and not self._sent(digest.channel, day):
                found.append(_Due(digest.channel, day, "channel"))
        return found

    def _sent(self, target: str, day: date) -> bool:
        """Whether that digest was claimed (by any replica): remembered once known."""
        if (target, day) in self._claimed:
            return True
        if self.digests.digest_sent(target, day.isoformat()):
            self._known_claimed(target, day)
            return True
        return False

    def _known_claimed(self, target: str, day: date) -> None:
        if len(self._claimed) > _REMEMBERED:
            self._claimed.clear()  # bounded; the store still knows
        self._claimed.add((target, day))


def digest_rows(items: Sequence[Any], places: Mapping[str, GroupPlace]) -> list[Any]:
    """``items`` (most urgent first) as a digest lists them: identical items waiting in one
    channel as one row (:func:`~kandev_slack.usecases.views.waiting.group_rows`, led by the
    group's channel card), the rows critical first, then high, then the rest — a row as urgent
    as its most urgent item — each rank oldest first (a row as old as its oldest item; ties
    keep Kandev's order)."""
    rows = group_rows(items, places) if items else []
    return sorted(rows, key=lambda row: (_rank(row), min(m.created_at for m in row.members)))


def _rank(row: Any) -> int:
    return min(urgency_rank(member.task) for member in row.members)


def _channel_day(digest: ChannelDigest, now: datetime) -> date | None:
    at, tz = parse_time_of_day(digest.at), zone(digest.tz)
    if at is None or tz is None:  # the routing file was validated: never
        return None
    return due_date(now, at, tz)


@dataclass(eq=False)
class DigestWorker(PeriodicLoop):
    """Sends the digests due, every ``DIGEST_CHECK_S``, on every replica (once each)."""

    digests: Digests
    health: Health
    _: KW_ONLY
    interval_s: float = CHECK_S
    component = "digests"
    failing = "store or Kandev error while sending digests"

    def work_once(self) -> int:
        return self.digests.send_due()
