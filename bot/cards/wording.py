"""The words people read: outcome lines, answer summaries, ages, times and the short messages
the answer flow sends. Every function returns safe mrkdwn (untrusted parts escaped)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Literal

from bot.cards.text import fit_escaped, one_line
from bot.domain import CardOutcome, CardState
from bot.kandev.models import Answer, Bundle

MAX_LABEL_IN_SUMMARY = 100
MAX_REASON_IN_LINE = 300
FREE_TEXT = "“free text”"
NO_ANSWER = "no answer"

_SLACK_USER = re.compile(r"[UW][A-Z0-9]{2,30}")

Action = Literal["answer", "reject"]


def user_mention(user_id: str | None) -> str | None:
    """``<@U123>`` for a well-formed Slack user id, else None (never mention arbitrary text)."""
    if user_id and _SLACK_USER.fullmatch(user_id):
        return f"<@{user_id}>"
    return None


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def slack_date(at: datetime, token: str = "{date_short_pretty} at {time}") -> str:
    """A Slack date token, shown in the reader's time zone, with a UTC fallback."""
    at = _utc(at)
    return f"<!date^{int(at.timestamp())}^{token}|{at:%Y-%m-%d %H:%M} UTC>"


def age_text(created_at: datetime, now: datetime) -> str:
    """``asked just now`` / ``asked 3 min ago`` / ``asked 2 h ago`` / ``asked 3 days ago``."""
    seconds = max(0, int((_utc(now) - _utc(created_at)).total_seconds()))
    if seconds < 60:
        return "asked just now"
    if seconds < 3600:
        return f"asked {seconds // 60} min ago"
    if seconds < 48 * 3600:
        return f"asked {seconds // 3600} h ago"
    return f"asked {seconds // 86400} days ago"


def _label(text: str) -> str:
    return fit_escaped(one_line(text), MAX_LABEL_IN_SUMMARY)[0]


def _answer_item(bundle: Bundle, answer: Answer | None) -> str:
    if answer is None:
        return NO_ANSWER
    question = bundle.question(answer.question_id)
    labels = []
    for option_id in answer.selected_options:
        option = question.option(option_id) if question else None
        labels.append(_label(option.label if option and option.label else option_id))
    parts = [", ".join(labels)] if labels else []
    if answer.custom_text.strip():
        parts.append(FREE_TEXT)
    return " + ".join(parts) or NO_ANSWER


def answers_summary(bundle: Bundle, answers: list[Answer]) -> str:
    """Per question, in the bundle's order: the chosen label(s) or “free text”, joined by
    ``; ``. Empty when there is nothing to summarise."""
    if not answers:
        return ""
    by_question = {a.question_id: a for a in answers}
    if bundle.questions:
        items = [_answer_item(bundle, by_question.get(q.question_id)) for q in bundle.questions]
    else:
        items = [_answer_item(bundle, a) for a in answers]
    return "; ".join(items)


def _quoted_reason(reason: str) -> str:
    return "“" + fit_escaped(one_line(reason), MAX_REASON_IN_LINE)[0] + "”"


def outcome_line(outcome: CardOutcome, bundle: Bundle) -> str:
    """The one line a resolved card carries, exactly as design.md words it."""
    who = user_mention(outcome.by_user)
    in_slack = outcome.via == "slack"
    where = (f"by {who} in Slack" if who else "in Slack") if in_slack else "in Kandev"
    if outcome.state is CardState.ANSWERED:
        summary = answers_summary(bundle, outcome.answers)
        return f"✅ Answered {where}: {summary}" if summary else f"✅ Answered {where}"
    if outcome.state is CardState.REJECTED:
        reason = outcome.reason.strip()
        line = f"⛔ Rejected {where}"
        return f"{line}: {_quoted_reason(reason)}" if reason else line
    if outcome.state is CardState.ENDED:
        return "⏹ Ended — nobody answered (cancelled, expired or the agent moved on)"
    if outcome.state is CardState.UNAVAILABLE:
        return "⚠️ Unavailable — Kandev no longer shows this question to the bot"
    return "⏳ Waiting for an answer"
