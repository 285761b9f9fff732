"""The words and blocks of quiet hours and calm DMs (pure): the summary of what waited, the
``/kandev-questions quiet`` replies, and a gathering DM's header."""

from __future__ import annotations

from kandev_slack.cards.blocks import Block, context, section
from kandev_slack.cards.ids import COMMAND
from kandev_slack.cards.text import fit_escaped, one_line
from kandev_slack.core.timing.quiet import MAX_LISTED, Listed

#: Each listed item's question, at most this long.
MAX_HEADLINE = 120

USAGE = (
    f"`{COMMAND} quiet 19:00-08:00` (in your Slack time zone: reminders, escalations and "
    f"direct messages wait and arrive as one summary when they end; critical ones still go "
    f"through), `{COMMAND} quiet off`, `{COMMAND} quiet` shows yours."
)


def _count(total: int, critical: int) -> str:
    items = "1 item waits" if total == 1 else f"{total} items wait"
    return f"{items} — {critical} critical" if critical else items


def _line(item: Listed) -> str:
    flag = "🔴 " if item.critical else ""
    headline = fit_escaped(one_line(item.headline) or "(no question)", MAX_HEADLINE)[0]
    return f"• {flag}<{item.link}|{headline}>" if item.link else f"• {flag}{headline}"


def summary_message(listed: list[Listed], total: int, critical: int) -> tuple[str, list[Block]]:
    """``While you were away: 5 items wait — 1 critical`` and one line per listed item (at
    most :data:`MAX_LISTED`, critical first), each linking to its card; the rest counted."""
    head = f"🌙 While you were away: {_count(total, critical)}"
    ordered = sorted(listed, key=lambda item: not item.critical)[:MAX_LISTED]
    blocks: list[Block] = [section(f"*{head}*"), section("\n".join(_line(i) for i in ordered))]
    hidden = total - len(ordered)
    if hidden > 0:
        blocks.append(context(f"and {hidden} more — `{COMMAND}` lists them all"))
    return head, blocks


def gather_message(total: int, critical: int) -> tuple[str, list[Block]]:
    """A gathering DM: ``7 agents need you — 2 critical``; the cards are in its thread."""
    agents = "1 agent needs you" if total == 1 else f"{total} agents need you"
    head = f"{agents} — {critical} critical" if critical else agents
    return f"🧵 {head}", [section(f"🧵 *{head}*"), context("Their cards are in this thread.")]


def quiet_shown(hours: str | None, tz: str | None) -> str:
    if hours is None:
        return f"You have no quiet hours. {USAGE}"
    return f"🌙 Your quiet hours: *{hours}* ({tz}). `{COMMAND} quiet off` removes them."


def quiet_set_message(hours: str, tz: str) -> str:
    return (
        f"🌙 Quiet hours set: *{hours}* ({tz}, your Slack time zone). Reminders, escalations "
        "and direct messages for you wait until they end and then arrive as one summary; "
        "critical ones still go through."
    )


def quiet_off_message(had: bool) -> str:
    if not had:
        return "You had no quiet hours."
    return "Quiet hours removed: anything that waited for them arrives now, as one summary."


def quiet_bad_message(problem: str, value: str) -> str:
    """A range that cannot be used: what is wrong, and nothing changed."""
    shown = fit_escaped(value, 60)[0]
    why = {
        "clock": f"`{shown}` has a time that does not exist (use 00:00 to 23:59)",
        "empty": f"`{shown}` starts and ends at the same time",
        "tz": f"your Slack time zone `{shown}` is not one this app knows",
    }.get(problem, f"`{shown}` is not a range of two times such as `19:00-08:00`")
    return f"⚠️ Quiet hours not changed: {why}. {USAGE}"


def quiet_no_tz_message() -> str:
    return "⚠️ Quiet hours not changed: Slack did not say your time zone; try again in a moment."
