"""The publisher's turn in a channel's pace, shared by every replica
(kandev_slack/store/queues/pace.py).

A message that may not go yet waits for its slot (:class:`NotYourTurn`). A channel whose pace
row another database session holds (a replica frozen inside its pace transaction, an operator's
forgotten transaction) is not waited for: the store raises ``PaceBusy`` at once, the message is
deferred and /healthz says so, so that one channel never holds up another channel or any edit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from kandev_slack.ops.health import Health
from kandev_slack.store.queues.pace import STALE_SLOT_S, Pace, PaceBusy, Turn

#: Seconds between two posts to one channel (Slack allows about one message per second).
POST_SPACING_S = 1.0
#: How much sooner than ``spacing`` after the previous post a post may go when that one was sent
#: late (a busy replica), as a fraction of the spacing: the average pace is kept without every
#: later post having to wait again, and two posts are never closer than 7/8 of the spacing.
POST_TOLERANCE = 0.125
#: How long a message waits when its channel's pace row is locked by another session.
LOCKED_WAIT_S = 1.0
#: How soon a post whose slot has come tries again when the row is locked: the holder is most
#: likely another replica taking a turn of a few milliseconds. Given up for LOCKED_WAIT_S once
#: the slot is STALE_SLOT_S old (a frozen holder: the slot passes, as a dead replica's does).
#: Before, such a post waited LOCKED_WAIT_S and gave its slot up: the channel lost a second
#: (3 of 7 locked rows in the benchmark's 3 replicas, 2026-12-07).
LOCKED_RETRY_S = 0.1
#: The /healthz component (one per channel) that tells posts are deferred by a database lock.
LOCKS = "locks"


class PaceOutbox(Protocol):
    """The per-channel pace (kandev_slack.store.OutboxRepository)."""

    def pace_turn(
        self, channel: str, *, follow: bool, held: datetime | None, pace: Pace
    ) -> Turn: ...

    def pace_block(self, channel: str, seconds: float, *, tolerance_s: float) -> None: ...


class NotYourTurn(Exception):
    """A message may not go to its channel yet: wait for ``turn.at`` (its slot)."""

    def __init__(self, turn: Turn) -> None:
        super().__init__(f"paced until {turn.at.isoformat()}")
        self.turn = turn


class Pacer:
    """Takes turns in the shared pace for one publisher."""

    def __init__(self, outbox: PaceOutbox, health: Health, spacing_s: float) -> None:
        self.outbox, self.health, self.spacing_s = outbox, health, spacing_s

    def take_turn(self, channel: str, *, follow: bool, held: datetime | None) -> None:
        """Just before a message is sent to ``channel``; raises :class:`NotYourTurn` with the
        slot to wait for, or ``PaceBusy``. ``follow``: a copy or thread reply (card posts go
        before those waiting in the channel)."""
        pace = Pace(self.spacing_s, self.spacing_s * POST_TOLERANCE)
        turn = self.outbox.pace_turn(channel, follow=follow, held=held, pace=pace)
        self.health.clear(f"{LOCKS} {channel}")
        if not turn.go:
            raise NotYourTurn(turn)

    def locked_wait(self, held: datetime | None, now: datetime) -> tuple[float, datetime | None]:
        """How long a message waits when its channel's pace row is locked, and the slot it
        keeps meanwhile: a fresh held slot is kept and tried again in LOCKED_RETRY_S; a stale
        one, or none, waits LOCKED_WAIT_S and queues again."""
        if held is not None and (now - held).total_seconds() < STALE_SLOT_S:
            return LOCKED_RETRY_S, held
        return LOCKED_WAIT_S, None

    def block(self, channel: str, seconds: float) -> None:
        """Slack refused a message in ``channel`` (429): no replica posts there for a while."""
        try:
            self.outbox.pace_block(channel, seconds, tolerance_s=self.spacing_s * POST_TOLERANCE)
        except PaceBusy:
            self.locked(channel)  # this replica still holds off (the publisher's own block)

    def locked(self, channel: str) -> None:
        self.health.problem(
            f"{LOCKS} {channel}",
            "posts deferred: the channel's pacing row is locked by another database session",
        )
