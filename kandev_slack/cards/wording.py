"""The words people read: outcome lines, answer summaries, ages, times and the short messages
the answer flow sends. Every function returns safe mrkdwn (untrusted parts escaped), of bounded
length whatever Kandev accepted: several options per question and long labels are condensed
(``A, B …and 4 more``), reasons and Kandev's messages are shortened quotes."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from kandev_slack.cards.limits import slack_len
from kandev_slack.cards.text import fit_escaped, one_line
from kandev_slack.core.clarification import SKIPPED_REASON, Answer, Bundle
from kandev_slack.core.domain import Action as Action
from kandev_slack.core.domain import CardOutcome, CardState, PastChoice

MAX_LABEL_IN_SUMMARY = 100
MAX_SUMMARY = 1000  # every question's answer together, in an outcome line or a message
MAX_REASON_IN_LINE = 300
MAX_KANDEV_MESSAGE = 500
#: No outcome line is longer (a card, the Home tab and messages quote it).
MAX_OUTCOME_LINE = MAX_SUMMARY + MAX_REASON_IN_LINE + 100
#: A free-text answer is quoted by its start, at most this long (code points).
MAX_FREE_TEXT_QUOTE = 40
NO_ANSWER = "no answer"
_ITEM_SEPARATOR = "; "
_LABEL_SEPARATOR = ", "
_MIN_LABEL = 12  # a label is never shortened below this to make room

_SLACK_USER = re.compile(r"[UW][A-Z0-9]{2,30}")


def user_mention(user_id: str | None) -> str | None:
    """``<@U123>`` for a well-formed Slack user id, else None (never mention arbitrary text)."""
    if user_id and _SLACK_USER.fullmatch(user_id):
        return f"<@{user_id}>"
    return None


#: A Kandev account's display name is shown at most this long (escaped, code points).
MAX_KANDEV_NAME = 80


def kandev_name(name: str) -> str:
    """A Kandev display name as safe mrkdwn: one line, escaped, bounded ("" for none)."""
    return fit_escaped(one_line(name), MAX_KANDEV_NAME)[0] if name.strip() else ""


def who_resolved(outcome: CardOutcome, *, mention: bool = True) -> str | None:
    """Who resolved a card, as its lines name them: the Slack person and the Kandev account
    they acted with (``<@U…> (Kandev: Ana)``), the Slack person alone (they acted with the
    bot's account), the Kandev account alone (``Ana``: nobody in Slack linked it), or None.
    ``mention``: False names no Slack person (a notification's text), only the Kandev name."""
    person = user_mention(outcome.by_user) if mention else None
    name = kandev_name(outcome.kandev_name)
    if person and name:
        return f"{person} (Kandev: {name})"
    return person or name or None


def resolved_where(outcome: CardOutcome, *, mention: bool = True) -> str:
    """``by <who> in Slack`` / ``by <who> in Kandev``, or ``in Slack`` / ``in Kandev`` when
    nobody is known (see :func:`who_resolved`)."""
    who = who_resolved(outcome, mention=mention)
    where = "in Slack" if outcome.via == "slack" else "in Kandev"
    return f"by {who} {where}" if who else where


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def slack_date(at: datetime, token: str = "{date_short_pretty} at {time}") -> str:
    """A Slack date token, shown in the reader's time zone, with a UTC fallback."""
    at = _utc(at)
    return f"<!date^{int(at.timestamp())}^{token}|{at:%Y-%m-%d %H:%M} UTC>"


def asked_at(created_at: datetime) -> str:
    """``asked <date token>``: Slack shows the date in the reader's time zone and it stays
    true however old the message gets (no relative age is frozen into a message)."""
    return f"asked {slack_date(created_at)}"


def waited_text(created_at: datetime, at: datetime) -> str:
    """``waiting 1 h`` / ``waiting 3 min``: how long a question had waited at ``at`` (said in a
    message sent then, which says so: "waiting … when this was sent" is what it means)."""
    seconds = max(0, int((_utc(at) - _utc(created_at)).total_seconds()))
    if seconds < 60:
        return "waiting under a minute"
    if seconds < 3600:
        return f"waiting {seconds // 60} min"
    if seconds < 48 * 3600:
        return f"waiting {seconds // 3600} h"
    return f"waiting {seconds // 86400} days"


def quoted_free_text(text: str, limit: int = MAX_FREE_TEXT_QUOTE) -> str:
    """The start of a free-text answer as a quote: ``“Use the other index…”`` (safe mrkdwn)."""
    return "“" + fit_escaped(one_line(text), limit)[0] + "”"


def _more(count: int) -> str:
    return f" …and {count} more" if count else ""


def _labels_within(raw_labels: list[str], room: int) -> str:
    """As many labels as fit in ``room`` (each at most ``MAX_LABEL_IN_SUMMARY``), then
    ``…and N more`` for the rest; the first one is shortened further if it must be."""
    labels = [fit_escaped(one_line(raw), MAX_LABEL_IN_SUMMARY)[0] for raw in raw_labels]
    shown: list[str] = []
    used = 0
    for index, label in enumerate(labels):
        cost = slack_len(label) + (slack_len(_LABEL_SEPARATOR) if shown else 0)
        if used + cost + slack_len(_more(len(labels) - index - 1)) > room:
            break
        shown.append(label)
        used += cost
    if not shown:
        rest = _more(len(labels) - 1)
        limit = max(_MIN_LABEL, room - slack_len(rest))
        return fit_escaped(one_line(raw_labels[0]), limit)[0] + rest
    return _LABEL_SEPARATOR.join(shown) + _more(len(labels) - len(shown))


def _answer_item(bundle: Bundle, answer: Answer | None, room: int) -> str:
    if answer is None:
        return NO_ANSWER
    question = bundle.question(answer.question_id)
    raw_labels = []
    for option_id in dict.fromkeys(answer.selected_options):  # each option once, in order
        option = question.option(option_id) if question else None
        raw_labels.append(option.label if option and option.label else option_id)
    return _item(raw_labels, answer.custom_text, room)


def _item(raw_labels: list[str], free_text: str, room: int) -> str:
    quote = (
        quoted_free_text(free_text, min(MAX_FREE_TEXT_QUOTE, max(8, room - 2)))
        if free_text.strip()
        else ""
    )
    if not raw_labels:
        return quote or NO_ANSWER
    free = f" + {quote}" if quote else ""
    return _labels_within(raw_labels, room - slack_len(free)) + free


def answers_summary(bundle: Bundle, answers: list[Answer], *, budget: int = MAX_SUMMARY) -> str:
    """Per question, in the bundle's order: the chosen label(s) and the start of a free-text answer
    quoted (``“Use the other index…”``), joined by
    ``; ``, within about ``budget`` (each question gets an equal share; labels that do not fit
    are counted: ``A, B …and 4 more``). Empty when there is nothing to summarise."""
    if not answers:
        return ""
    by_question = {a.question_id: a for a in answers}
    chosen: list[Answer | None]
    if bundle.questions:
        chosen = [by_question.get(q.question_id) for q in bundle.questions]
    else:
        chosen = list(by_question.values())
    room = (budget - slack_len(_ITEM_SEPARATOR) * (len(chosen) - 1)) // len(chosen)
    return _ITEM_SEPARATOR.join(_answer_item(bundle, a, room) for a in chosen)


def choices_summary(choices: tuple[PastChoice, ...], *, budget: int = MAX_SUMMARY) -> str:
    """:func:`answers_summary` of an earlier answer kept as :class:`PastChoice` data."""
    if not choices:
        return ""
    room = (budget - slack_len(_ITEM_SEPARATOR) * (len(choices) - 1)) // len(choices)
    return _ITEM_SEPARATOR.join(_item(list(c.labels), c.text, room) for c in choices)


def _quoted_reason(reason: str) -> str:
    return "“" + fit_escaped(one_line(reason), MAX_REASON_IN_LINE)[0] + "”"


def outcome_line(outcome: CardOutcome, bundle: Bundle, *, mention: bool = True) -> str:
    """The one line a resolved card carries: who resolved it, where, and with what.

    ``mention``: name who resolved it as ``<@U…>`` (an edit of a card never notifies anyone;
    a new message or a notification text names only their Kandev account, if any: see
    :func:`who_resolved`)."""
    where = resolved_where(outcome, mention=mention)
    if outcome.state is CardState.ANSWERED:
        summary = answers_summary(bundle, outcome.answers)
        return f"✅ Answered {where}: {summary}" if summary else f"✅ Answered {where}"
    if outcome.state is CardState.REJECTED:
        reason = outcome.reason.strip()
        # Skip in Slack (Kandev keeps no reason, so its web UI's Skip reads as a rejection).
        if reason == SKIPPED_REASON:
            return f"⏭ Skipped {where}"
        line = f"⛔ Rejected {where}"
        return f"{line}: {_quoted_reason(reason)}" if reason else line
    if outcome.state is CardState.ENDED:
        if outcome.reason == "superseded":  # the inbox history said a new turn started
            return "⏹ Ended — the agent was given new instructions before anyone answered"
        return "⏹ Ended — nobody answered (cancelled, expired or the agent moved on)"
    if outcome.state is CardState.UNAVAILABLE:
        return "⚠️ Unavailable — Kandev no longer shows this question to the bot"
    return "⏳ Waiting for an answer"
