"""The words of follow-ups: reminders, the escalation notice and the escalation card's note
(pure; mrkdwn the bot makes itself, mentions included — these notify, cards do not)."""

from __future__ import annotations

from bot.config.followups import describe_duration, mentions


def _where(target: str) -> str:
    """A channel as ``<#C…>``, a person as ``<@U…>``."""
    return f"<@{target}>" if target[:1] in ("U", "W") else f"<#{target}>"


def reminder_text(waited_s: float, mention: tuple[str, ...]) -> str:
    """``⏰ Still waiting for an answer after 15 min`` and who it notifies."""
    text = f"⏰ Still waiting for an answer after {describe_duration(waited_s)}"
    return f"{text} {mentions(mention)}" if mention else text


def escalated_reply(target: str) -> str:
    """The reply under the channel card: ``🔺 Escalated to #leads``."""
    return f"🔺 Escalated to {_where(target)}"


def escalation_note(waited_s: float, first_channel: str, mention: tuple[str, ...]) -> str:
    """The line above an escalation card: how long it has waited and where it was asked."""
    text = (
        f"🔺 *Escalated:* waiting for an answer for {describe_duration(waited_s)}, "
        f"first asked in {_where(first_channel)}"
    )
    return f"{text} {mentions(mention)}" if mention else text
