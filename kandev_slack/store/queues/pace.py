"""Posting slots per channel, shared by every replica: Slack allows about one message per second
per channel, whichever process sends it.

Each channel has one row in ``channel_pace``, changed only under its row lock (PostgreSQL:
``SELECT … FOR UPDATE NOWAIT``, so a row another session holds — a replica frozen inside this
transaction, an operator's forgotten one — raises :class:`PaceBusy` at once instead of holding
up the caller, and with it every other channel and every edit; SQLite: ``BEGIN IMMEDIATE``) and
only by the DATABASE's clock, so replicas whose own clocks differ still agree:

- a queue of slots ``spacing_s`` apart: a post that has to wait is given the next slot and is
  deferred to it (the slot is kept on its outbox row), so a backlog is taken about once per post
  instead of every waiting post being retried at every free moment. Card posts have a queue of
  their own (``cards_at``); the other messages (a bundle's copies, thread replies) queue after
  every card post waiting in the channel (``follows_at``), so reminders never delay a card.
- a gate on what is actually sent (``free_at``, a virtual-scheduling token bucket): a message
  goes only when the gate is open, and each message sent moves it ``spacing_s`` on. Two posts
  are never sent closer than ``spacing_s - tolerance_s`` apart, and never more than one per
  ``spacing_s`` on average, even when a post is sent late (a busy process) or a slot's holder
  died: a dead replica's slot simply passes unused, it never blocks the channel.

The database's clock may step back (NTP, a VM restored): then the row's times, kept in the old
time, would hold every message back by the whole step. The row remembers the now it last saw
(``seen_at``); a now before it moves the gate back by the step and starts the queues again, and
a slot an item was given before the step (later than any the row could have given since) is
given up for a new one, so every wait stays within its own interval whatever the clock does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, literal, select, type_coerce, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import OperationalError

from kandev_slack.store.base import Repository
from kandev_slack.store.schema import channel_pace
from kandev_slack.store.sql.types import UTCDateTime, require_aware

_NEVER = datetime(1970, 1, 1, tzinfo=UTC)
#: A slot held for longer than this after it came is not honoured: the item queues again (it was
#: held by a process that died, or the store was away) instead of crowding the gate.
STALE_SLOT_S = 2.0
#: PostgreSQL's "lock_not_available": NOWAIT found the row locked, or lock_timeout ran out.
_LOCK_NOT_AVAILABLE = "55P03"


class PaceBusy(Exception):
    """The channel's pace row is locked by another session: try the message again later."""

    def __init__(self, channel: str) -> None:
        super().__init__(f"the pace row of {channel} is locked by another session")
        self.channel = channel


@dataclass(frozen=True)
class Pace:
    """A channel's pace: ``spacing_s`` between two messages, of which a message sent after a
    late one may take back up to ``tolerance_s``."""

    spacing_s: float
    tolerance_s: float


@dataclass(frozen=True)
class _Row:
    """A channel's pace row as read (locked), with the database's now read after the lock."""

    free_at: datetime
    cards_at: datetime
    follows_at: datetime
    seen_at: datetime | None
    now: datetime

    @property
    def step_back(self) -> timedelta:
        """How far the clock went back since the row was last used (zero: it did not)."""
        if self.seen_at is None or self.seen_at <= self.now:
            return timedelta(0)
        return self.seen_at - self.now

    def times(self) -> tuple[datetime, datetime, datetime]:
        """``free_at``, ``cards_at``, ``follows_at`` in the current time. After a step back the
        gate moves back by the step, and the queues start again: every slot given before the
        step is given up by its item (which queues anew), so none of them is kept."""
        back = self.step_back
        if not back:
            return self.free_at, self.cards_at, self.follows_at
        return max(self.free_at - back, _NEVER), _NEVER, _NEVER

    def values(self) -> dict[str, datetime]:
        """What to write back in any case: the now seen, and the times moved back if they were."""
        values = {"seen_at": self.now}
        if self.step_back:
            free_at, cards_at, follows_at = self.times()
            values.update(free_at=free_at, cards_at=cards_at, follows_at=follows_at)
        return values


@dataclass(frozen=True)
class Turn:
    """The answer of :meth:`PaceMixin.pace_turn`, in the database's time.

    ``go``: send now (the gate has moved on for it). Otherwise wait until ``at``, holding the
    slot ``at`` (pass it back as ``held`` then)."""

    go: bool
    at: datetime
    now: datetime

    @property
    def wait_s(self) -> float:
        return max((self.at - self.now).total_seconds(), 0.0)


class PaceMixin(Repository):
    """The posting-slots half of :class:`kandev_slack.store.queues.outbox.OutboxRepository`."""

    def pace_turn(self, channel: str, *, follow: bool, held: datetime | None, pace: Pace) -> Turn:
        """May a message go to ``channel`` now? ``follow``: a copy or thread reply (it waits
        for the card posts queued in the channel). ``held``: the slot the item was given last
        time, if any (without one, or with a stale one, the item joins its queue)."""
        spacing_s = pace.spacing_s
        spacing = timedelta(seconds=spacing_s)
        tolerance = timedelta(seconds=pace.tolerance_s)
        held = None if held is None else require_aware(held)
        with self._write() as conn:
            row = self._pace_row(conn, channel)
            (free_at, cards_at, follows_at), now = row.times(), row.now
            values = row.values()
            slot = held
            if slot is not None and (
                now - slot > timedelta(seconds=max(STALE_SLOT_S, spacing_s))
                or (follow and cards_at > now)  # a card post is due or waiting: it goes first
                # later than any slot given since: given in the time before a step back
                or slot > max(follows_at if follow else cards_at, free_at - tolerance)
            ):
                slot = None
            if slot is None:
                if follow:
                    slot = max(follows_at, cards_at, free_at - tolerance, now)
                    values["follows_at"] = slot + spacing
                else:
                    slot = max(cards_at, free_at - tolerance, now)
                    values["cards_at"] = slot + spacing
            go = slot <= now and free_at <= now + tolerance
            if go:
                values["free_at"] = max(free_at, now) + spacing
            else:
                slot = max(slot, free_at - tolerance)
            conn.execute(
                update(channel_pace).where(channel_pace.c.channel == channel).values(**values)
            )
        return Turn(go=go, at=now if go else slot, now=now)

    def pace_block(self, channel: str, seconds: float, *, tolerance_s: float) -> None:
        """Slack refused a message in ``channel`` (429): nobody sends there for ``seconds``."""
        with self._write() as conn:
            row = self._pace_row(conn, channel)
            values = row.values()
            until = row.now + timedelta(seconds=seconds + tolerance_s)
            if until > row.times()[0]:
                values["free_at"] = until
            conn.execute(
                update(channel_pace).where(channel_pace.c.channel == channel).values(**values)
            )

    def _pace_row(self, conn: Any, channel: str) -> _Row:
        """The channel's row (created when new), locked until the transaction ends, and the
        database's now read after the lock was granted. :class:`PaceBusy` when another session
        holds the row (PostgreSQL)."""
        if conn.dialect.name == "postgresql":
            try:
                return self._pg_pace_row(conn, channel)
            except OperationalError as exc:
                if getattr(exc.orig, "sqlstate", None) == _LOCK_NOT_AVAILABLE:
                    raise PaceBusy(channel) from exc
                raise
        insert = sqlite_insert(channel_pace).values(
            channel=channel, free_at=_NEVER, cards_at=_NEVER, follows_at=_NEVER
        )
        stmt = insert.on_conflict_do_update(
            index_elements=["channel"], set_={"channel": insert.excluded.channel}
        ).returning(
            channel_pace.c.free_at,
            channel_pace.c.cards_at,
            channel_pace.c.follows_at,
            channel_pace.c.seen_at,
            self._clock_now(conn.dialect.name).label("now"),
        )
        return _Row(**conn.execute(stmt).one()._asdict())

    def _pg_pace_row(self, conn: Any, channel: str) -> _Row:
        locked = (
            select(
                channel_pace.c.free_at,
                channel_pace.c.cards_at,
                channel_pace.c.follows_at,
                channel_pace.c.seen_at,
                self._clock_now("postgresql").label("now"),
            )
            .where(channel_pace.c.channel == channel)
            .with_for_update(nowait=True)
        )
        row = conn.execute(locked).first()
        if row is None:  # a new channel (a concurrent insert is waited for up to lock_timeout)
            conn.execute(
                pg_insert(channel_pace)
                .values(channel=channel, free_at=_NEVER, cards_at=_NEVER, follows_at=_NEVER)
                .on_conflict_do_nothing(index_elements=["channel"])
            )
            row = conn.execute(locked).one()
        return _Row(**row._asdict())

    def _clock_now(self, dialect: str) -> ColumnElement[Any]:
        """The database's now at this very moment (PostgreSQL's ``now()`` is the start of the
        transaction, which may have waited for the row lock)."""
        if self._clock is not None:
            return literal(self._clock(), UTCDateTime())
        if dialect == "postgresql":
            return type_coerce(func.clock_timestamp(), UTCDateTime())
        return self._now()
