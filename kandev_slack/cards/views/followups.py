"""The words of follow-ups: reminders, the escalation notice and the escalation card's note
(pure; mrkdwn the bot makes itself, mentions included — these notify, cards do not)."""

from __future__ import annotations

from datetime import datetime

from kandev_slack.cards.mrkdwn import markdown_to_plain
from kandev_slack.cards.text import fit_escaped, one_line
from kandev_slack.config.followups import describe_duration, mentions
from kandev_slack.kinds.approval.cards.text import fit_middle, not_shown

#: The question a reminder names, at most this long.
MAX_QUESTION_IN_REMINDER = 150


def _where(target: str) -> str:
    """A channel as ``<#C…>``, a person as ``<@U…>``."""
    return f"<@{target}>" if target[:1] in ("U", "W") else f"<#{target}>"


def _question(headline: str) -> str:
    """The question (or what an approval would allow), bold and quoted; when long, its start
    and its end with how many characters are not shown (the end of a command matters)."""
    flat = one_line(headline).replace("*", "∗")
    middle = fit_middle(flat, MAX_QUESTION_IN_REMINDER, _escaped)
    if middle.whole:
        return f"*“{middle.head}”*" if middle.head else ""
    return f"*“{middle.head} …”* _({not_shown(middle.hidden)})_ *“… {middle.tail}”*"


def _escaped(text: str) -> str:
    return fit_escaped(text, len(text) * 5 + 10)[0]


def reminder_text(
    waited_s: float, mention: tuple[str, ...], headline: str = "", *, markdown: bool = False
) -> str:
    """``⏰ Still waiting for an answer after 15 min: “Which database…?”`` and who it
    notifies (``headline``: the question, or what an approval asks for; ``markdown``: the
    question's Kandev Markdown, quoted as plain words — no stray ``∗`` or backtick)."""
    text = f"⏰ Still waiting for an answer after {describe_duration(waited_s)}"
    question = _question(markdown_to_plain(headline) if markdown else headline)
    if question:
        text += f": {question}"
    return f"{text} {mentions(mention)}" if mention else text


def escalated_reply(target: str) -> str:
    """The reply under the channel card: ``🔺 Escalated to #leads``."""
    return f"🔺 Escalated to {_where(target)}"


def escalation_note(first_channel: str, mention: tuple[str, ...]) -> str:
    """The line above an escalation card: escalated, and where it was first asked. No age:
    a "waiting 10 min" written once would never change (the card's grey line says when it
    was asked, as a date token Slack shows live)."""
    text = f"🔺 *Escalated* · first asked in {_where(first_channel)}"
    return f"{text} {mentions(mention)}" if mention else text


def escalation_text() -> str:
    """The start of an escalation card's notification text: ``🔺 Escalated · ``."""
    return "🔺 Escalated · "


def waited_seconds(asked: datetime, sent: datetime) -> float:
    return max(0.0, (sent - asked).total_seconds())
