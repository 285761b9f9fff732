""" "I'm on it": a person takes a waiting card without answering it yet (pure).

A claim has a holder, a start and an end (``claim_for`` after it was taken, a routing key).
While it holds, the card's follow-ups pause: its *follow-up age* — the age reminders and
escalation are measured with — stops growing, and resumes where it stopped once the claim is
released, taken over or runs out. So a reminder due 15 min after the question was asked comes
15 min of unclaimed waiting after it, however long someone held it meanwhile.

``paused_s`` is the time the card spent claimed by claims that are over; the one that holds
now counts up to ``now`` (or to its end).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

#: How long a claim holds when the route does not say (the ``claim_for`` routing key).
DEFAULT_CLAIM_FOR_S = 30 * 60.0


class Claim(BaseModel):
    """Who is on a waiting card, since when, and until when the claim holds."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    since: datetime
    until: datetime

    def holds(self, now: datetime) -> bool:
        return now < self.until

    def held_s(self, now: datetime) -> float:
        """How long it has paused the card's follow-ups by ``now`` (at most its length)."""
        end = min(now, self.until)
        return max(0.0, (end - self.since).total_seconds())


def new_claim(user_id: str, now: datetime, claim_for_s: float) -> Claim:
    return Claim(user_id=user_id, since=now, until=now + timedelta(seconds=claim_for_s))


def followup_age(
    created_at: datetime, now: datetime, paused_s: float, claim: Claim | None
) -> float:
    """The card's age for its reminders and escalation: its age less the time it was claimed
    (by claims that are over, ``paused_s``, and by the one it has, if any)."""
    age = (now - created_at).total_seconds()
    held = claim.held_s(now) if claim is not None else 0.0
    return max(0.0, age - paused_s - held)
