"""Snooze: one person hides a waiting question from their own App Home, listing and DM cards
for 1 h, 4 h or 24 h (pure).

A snooze is per person and per pending item, kept in the bot's store (Kandev's inbox snooze is
per Kandev user: for a linked person in a route that uses their own account, their Kandev
Needs-you inbox is snoozed too, for :func:`kandev_snooze` of its length). Its ``token`` names
one snooze: every change to it (a new length, Unsnooze, its end) is a compare-and-set on the
token as read, so two replicas ending the same snooze end it once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

#: The lengths a person may choose, in hours.
SNOOZE_HOURS: tuple[int, ...] = (1, 4, 24)
#: The start of the token of a snooze that mirrors a hide in the person's Kandev inbox.
KANDEV_TOKEN = "kandev:"
#: How long such a snooze lasts, in snooze hours, before it is renewed (while Kandev hides the
#: item) or ended (once Kandev shows it again): Kandev's inbox decides, not this length.
KANDEV_MIRROR_HOURS = 24
#: Seconds in one of those hours (the ``SNOOZE_HOUR_S`` setting makes it shorter in tests).
HOUR_S = 3600.0


class Snooze(BaseModel):
    """``user_id`` hid ``pending_id`` for ``hours`` until ``until``."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    pending_id: str
    until: datetime
    hours: int
    token: str

    @property
    def from_kandev(self) -> bool:
        """Whether it mirrors what the person hid in their Kandev Needs-you inbox (made by the
        bot, not by a choice in Slack: its end is not sent back to Kandev)."""
        return self.token.startswith(KANDEV_TOKEN)

    def holds(self, now: datetime) -> bool:
        return now < self.until

    def since(self, hour_s: float = HOUR_S) -> datetime:
        """When it was set (its length before its end)."""
        return self.until - timedelta(seconds=self.hours * hour_s)


def new_snooze(
    user_id: str, pending_id: str, hours: int, now: datetime, token: str, hour_s: float = HOUR_S
) -> Snooze:
    until = now + timedelta(seconds=hours * hour_s)
    return Snooze(user_id=user_id, pending_id=pending_id, until=until, hours=hours, token=token)


#: The snooze lengths Kandev's Needs-you inbox takes (``snooze_duration``), in hours.
KANDEV_SNOOZES: tuple[tuple[str, int], ...] = (("1h", 1), ("4h", 4), ("24h", 24))


def kandev_snooze(hours: int) -> str | None:
    """The Kandev inbox snooze that hides an item at least as long as a Slack snooze of
    ``hours`` (never shorter than what Slack shows): the shortest Kandev length not below it;
    None (dismissed, cleared when the Slack snooze ends) when every Kandev length is shorter."""
    if hours <= 0:
        raise ValueError(f"a snooze lasts at least an hour, not {hours}")
    return next((name for name, length in KANDEV_SNOOZES if length >= hours), None)
