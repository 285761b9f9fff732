"""The routing file's follow-up keys: reminders and escalation, per route (pure).

::

    remind_after = "15m"          # first reminder; absent = never
    remind_every = "30m"          # later ones; absent = only one
    max_reminders = 3             # at most this many (default 3)
    mention = ["S0ONCALL"]        # who reminders notify (user or user-group ids)
    escalate_after = "1h"         # absent = never
    escalate_to = "C0LEADS"       # a channel id, or a user id for a direct message
    escalate_mention = ["S0LEADS"]
    claim_for = "30m"             # how long "I'm on it" pauses these (default 30m)
    quiet_hours = "19:00-08:00"   # reminders, escalations and DM cards wait (may cross midnight)
    quiet_tz = "Europe/Berlin"    # the time zone of quiet_hours (default UTC)

Durations are a whole number and a unit: ``90s``, ``15m``, ``2h``, ``1d``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from kandev_slack.core.claims import DEFAULT_CLAIM_FOR_S
from kandev_slack.core.timing.quiet import QuietHours

DURATION = re.compile(r"^([1-9][0-9]*)([smhd])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
#: How many reminders a route with ``remind_every`` sends when ``max_reminders`` is absent.
DEFAULT_MAX_REMINDERS = 3
#: The keys, in the order the file documents them.
KEYS = (
    "remind_after",
    "remind_every",
    "max_reminders",
    "mention",
    "escalate_after",
    "escalate_to",
    "escalate_mention",
    "claim_for",
    "quiet_hours",
    "quiet_tz",
)


def parse_duration(value: str) -> float:
    """Seconds in ``90s`` / ``15m`` / ``2h`` / ``1d``; ValueError naming the value otherwise."""
    match = DURATION.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise ValueError(
            f"'{value}' is not a duration; write a whole number and a unit: 90s, 15m, 2h or 1d"
        )
    return float(int(match.group(1)) * _UNIT_S[match.group(2)])


def describe_duration(seconds: float) -> str:
    """``15 min``, ``2 h``, ``1 h 30 min``, ``45 s``, ``1 d`` (for people)."""
    total = int(seconds)
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} min"
    if total < 86400:
        hours, minutes = divmod(total // 60, 60)
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(total // 3600, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


class FollowUps(BaseModel):
    """A route's reminders and escalation (seconds; None: never)."""

    model_config = ConfigDict(frozen=True)

    remind_after: float | None = None
    remind_every: float | None = None
    max_reminders: int = DEFAULT_MAX_REMINDERS
    mention: tuple[str, ...] = ()
    escalate_after: float | None = None
    escalate_to: str | None = None
    escalate_mention: tuple[str, ...] = ()
    #: How long "I'm on it" holds a card, pausing its reminders and escalation.
    claim_for: float = DEFAULT_CLAIM_FOR_S
    #: When this route's reminders, escalations and DM cards wait (None: never).
    quiet: QuietHours | None = None

    @property
    def any(self) -> bool:
        """Whether this route asks for reminders or an escalation at all."""
        return self.remind_after is not None or self.escalation_due(float("inf"))

    def reminders_due(self, age_s: float) -> int:
        """How many reminders a card ``age_s`` old should have had by now."""
        if self.remind_after is None or age_s < self.remind_after:
            return 0
        if self.remind_every is None:
            return 1
        return min(1 + int((age_s - self.remind_after) // self.remind_every), self.max_reminders)

    def reminder_age(self, step: int) -> float:
        """The age at which reminder ``step`` (1-based) is due."""
        return (self.remind_after or 0.0) + (step - 1) * (self.remind_every or 0.0)

    def escalation_due(self, age_s: float) -> bool:
        return (
            self.escalate_after is not None
            and self.escalate_to is not None
            and age_s >= self.escalate_after
        )


def mentions(ids: tuple[str, ...]) -> str:
    """Slack mention tokens: ``<@U…>`` for a person, ``<!subteam^S…>`` for a user group."""
    return " ".join(f"<!subteam^{i}>" if i.startswith("S") else f"<@{i}>" for i in ids)
