""" "I'm on it" as cards show it (pure): the line under a waiting card's grey line, its buttons
in the quiet row, the notices in the card's thread, and the listing's and Home's short form.

Times are Slack date tokens (each reader sees their own time zone; the fallback is UTC).
"""

from __future__ import annotations

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, button, context
from kandev_slack.cards.ids import ButtonValue
from kandev_slack.cards.wording import slack_date, user_mention
from kandev_slack.config.followups import describe_duration
from kandev_slack.core.claims import Claim

#: ``10:02`` in the reader's time zone.
_TIME = "{time}"


def _holder(claim: Claim) -> str:
    return user_mention(claim.user_id) or "someone"


def claim_line(claim: Claim) -> str:
    """``👀 @ana is on it (since 10:02)``."""
    return f"👀 {_holder(claim)} is on it (since {slack_date(claim.since, _TIME)})"


def claim_block(claim: Claim) -> Block:
    return context(claim_line(claim), block_id=ids.BLOCK_CLAIM)


def claim_buttons(pending_id: str, claim: Claim | None) -> list[Block]:
    """Nobody on it: "I'm on it". Someone: "Take over" (anyone else who may answer) and
    "Release" (its holder) — one row for everyone, the click says who."""
    value = ButtonValue(pending_id=pending_id).encode()
    if claim is None:
        return [button("👀 I'm on it", ids.ACTION_CLAIM, value=value)]
    return [
        button("Take over", ids.ACTION_CLAIM, value=value),
        button("Release", ids.ACTION_RELEASE, value=value),
    ]


def short_claim(claim: Claim) -> str:
    """The listing's and Home's form: ``👀 @ana since 10:02``."""
    return f"👀 {_holder(claim)} since {slack_date(claim.since, _TIME)}"


def taken_over_text(previous: Claim, user_id: str) -> str:
    """The notice in the card's thread: ``👀 @bob took this over from @ana.``"""
    who = user_mention(user_id) or "Someone"
    return f"👀 {who} took this over from {_holder(previous)}."


def lapsed_text(claim: Claim) -> str:
    """``⏰ @ana's claim ran out after 30 min: reminders and escalation resume.``"""
    held = describe_duration((claim.until - claim.since).total_seconds())
    return f"⏰ {_holder(claim)}'s claim ran out after {held}: reminders and escalation resume."


# ---- what the person who clicked is told (ephemeral) ----------------------------------------


def on_it_message(claim: Claim, *, took_from: str | None, renewed: bool) -> str:
    until = slack_date(claim.until, _TIME)
    if took_from:
        first = f"👀 You took this over from {user_mention(took_from) or 'someone'}"
    elif renewed:
        first = "👀 Still yours"
    else:
        first = "👀 You're on it"
    return (
        f"{first}: until {until}, its reminders and escalation wait. Answer it when you know, "
        "or *Release* it for someone else."
    )


def released_message() -> str:
    return "You released it: nobody is on it now, and its reminders and escalation resume."


def not_holder_message(holder: Claim) -> str:
    return f"{claim_line(holder)}; only they can release it. *Take over* if you are taking it."


def not_claimed_message() -> str:
    return "Nobody is on this question now (the claim ran out or was released): nothing to release."


def contended_message(*, resolved: bool) -> str:
    if resolved:
        return "This question was resolved just now: nobody needs to be on it any more."
    return "Someone changed who is on this question at the same moment: look at the card again."
