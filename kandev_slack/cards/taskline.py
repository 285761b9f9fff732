"""The task line: the agent, the priority (unless the default) and the labels, e.g.
``🤖 claude · 🔴 critical · 🏷 database, infra``; it starts a card's grey line (with the workspace
and when it was asked). Pure; shared by the cards, the listing, the App Home and the
Conversation view."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from kandev_slack.cards.limits import slack_len
from kandev_slack.cards.mrkdwn import MAX_LINK_URL
from kandev_slack.cards.text import ELLIPSIS, fit_escaped, one_line, shorten_mrkdwn
from kandev_slack.core.domain import TaskInfo

PRIORITY_MARKS = {"critical": "🔴", "high": "🟠", "low": "🔵"}
DEFAULT_PRIORITY = "medium"
MAX_AGENT = 80
MAX_LABEL = 60
MAX_TASK_LINE = 600
#: The task line in a card's grey line (every kind's).
MAX_META_TASK_LINE = 300


def priority_text(priority: str) -> str:
    """``🔴 critical`` / ``🟠 high`` / ``🔵 low``; empty for the default (medium) or none."""
    value = one_line(priority).casefold()
    if not value or value == DEFAULT_PRIORITY:
        return ""
    mark = PRIORITY_MARKS.get(value, "⚪")
    return f"{mark} {fit_escaped(value, 40)[0]}"


def task_line(task: TaskInfo, limit: int = MAX_TASK_LINE) -> str:
    """Safe mrkdwn within ``limit``; empty when the task has nothing of the three to show."""
    parts = []
    agent = one_line(task.agent_name)
    if agent:
        parts.append("🤖 " + fit_escaped(agent, MAX_AGENT)[0])
    priority = priority_text(task.priority)
    if priority:
        parts.append(priority)
    labels = [one_line(label) for label in task.labels if one_line(label)]
    if labels:
        head = " · ".join(parts + ["🏷 "])
        room = limit - slack_len(head)
        shown: list[str] = []
        for index, label in enumerate(labels):
            text = fit_escaped(label, MAX_LABEL)[0]
            rest = len(labels) - index - 1
            more = f" +{rest} more" if rest else ""
            if slack_len(", ".join([*shown, text]) + more) > room:
                shown.append(f"+{len(labels) - index} more")
                break
            shown.append(text)
        parts.append("🏷 " + ", ".join(shown))
    line = " · ".join(parts)
    return shorten_mrkdwn(line, limit, note=ELLIPSIS)[0] if slack_len(line) > limit else line


# ------------------------------------------------------------------------------------------
# A task's link into Kandev and the title shown when it has none. Pure; shared by every

UNTITLED_TASK = "Untitled task"


def task_url(kandev_url: str, task_id: str) -> str:
    """``{kandev_url}/t/{task_id}``; raises ValueError unless it is a usable http(s) URL."""
    url = f"{kandev_url.rstrip('/')}/t/{quote(task_id, safe='')}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(url) > MAX_LINK_URL:
        raise ValueError(f"not a usable Kandev link (http(s), at most {MAX_LINK_URL}): {url!r}")
    return url


#: A critical or high task's notification text starts with its priority.
URGENT_PREFIXES = {"critical": "🔴 Critical · ", "high": "🟠 High · "}


def urgency_prefix(task: TaskInfo) -> str:
    """``🔴 Critical · `` / ``🟠 High · `` for an urgent task, else empty."""
    return URGENT_PREFIXES.get(one_line(task.priority).casefold(), "")
