"""Snooze as the App Home, the listing and DM cards show it (pure): the "Snooze…" select, the
"Unsnooze" button, a snoozed DM card's one line, Home's "💤 Snoozed" section, the notice in a
DM card's thread when a snooze ends, and what the person who chose is told.

Times are Slack date tokens (each reader sees their own time zone; the fallback is UTC).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, actions, button, context, plain, section
from kandev_slack.cards.ids import ButtonValue, CodecError, SnoozeValue
from kandev_slack.cards.limits import MAX_SECTION_TEXT
from kandev_slack.cards.mrkdwn import link
from kandev_slack.cards.parts.taskline import UNTITLED_TASK, task_url
from kandev_slack.cards.text import fit_escaped, fit_plain, one_line, shorten_mrkdwn
from kandev_slack.cards.wording import slack_date
from kandev_slack.core.domain import TaskInfo
from kandev_slack.core.snooze import KANDEV_SNOOZES, SNOOZE_HOURS, Snooze, kandev_snooze

#: Home's snoozed section shows at most this many items (one block each).
MAX_SNOOZED_SHOWN = 5
MAX_TITLE = 200
#: The block id of a snoozed DM card's line (and of Home's snoozed items).
BLOCK_SNOOZED = "kq_snoozed"


def _length(hours: int) -> str:
    return f"{hours} h"


def snooze_select(pending_id: str, *, group: bool = False) -> Block | None:
    """The "Snooze…" static_select (1 h / 4 h / 24 h); None when the item's id does not fit
    an option's value (then it is simply not offered). ``group``: a group row's select (it
    snoozes every item of the row the person may see)."""
    try:
        options = [
            {
                "text": plain(f"Snooze {_length(h)}", 75),
                "value": SnoozeValue(pending_id=pending_id, hours=h, group=group).encode(),
            }
            for h in SNOOZE_HOURS
        ]
    except CodecError:
        return None
    return {
        "type": "static_select",
        "action_id": ids.ACTION_SNOOZE,
        "placeholder": plain("💤 Snooze…", 150),
        "options": options,
    }


def unsnooze_button(pending_id: str) -> Block:
    return button(
        "Unsnooze", ids.ACTION_UNSNOOZE, value=ButtonValue(pending_id=pending_id).encode()
    )


def with_snooze_select(blocks: list[Block], pending_id: str) -> list[Block]:
    """A DM card's blocks with "Snooze…" in its quiet row, before "Open in Kandev" (no block
    is added, so the card stays within Slack's block limit)."""
    select = snooze_select(pending_id)
    if select is None:
        return blocks
    out = []
    for block in blocks:
        if block.get("block_id") == ids.BLOCK_MORE and block.get("type") == "actions":
            elements = list(block["elements"])
            elements.insert(max(len(elements) - 1, 0), select)
            block = {**block, "elements": elements}
        out.append(block)
    return out


def _title(task: TaskInfo) -> str:
    """The task title as a link's label (``link`` escapes it)."""
    return fit_plain(one_line(task.title) or UNTITLED_TASK, MAX_TITLE)[0]


def _said_title(task: TaskInfo) -> str:
    """The task title in a message's own text: escaped, its broadcasts defused."""
    return fit_escaped(one_line(task.title) or UNTITLED_TASK, MAX_TITLE)[0]


def snoozed_line(snooze: Snooze) -> str:
    """``💤 Snoozed until Today at 3:00 PM``."""
    return f"💤 Snoozed until {slack_date(snooze.until)}"


def snoozed_card(task: TaskInfo, snooze: Snooze, *, kandev_url: str) -> dict[str, Any]:
    """A snoozed DM card: one line — snoozed until when, the task — and Unsnooze."""
    url = task_url(kandev_url, task.task_id)
    text = f"{snoozed_line(snooze)} · *{link(url, _title(task))}*"
    return {
        "text": f"💤 Snoozed: {_said_title(task)}",
        "blocks": [
            section(shorten_mrkdwn(text, MAX_SECTION_TEXT, note="…")[0], block_id=BLOCK_SNOOZED),
            actions([unsnooze_button(snooze.pending_id)], block_id=ids.BLOCK_MORE),
        ],
    }


def snoozed_home_blocks(
    snoozed: Sequence[tuple[TaskInfo, Snooze]], *, kandev_url: str
) -> list[Block]:
    """Home's "💤 Snoozed (n)" section: each snoozed item with Unsnooze (none: no section)."""
    if not snoozed:
        return []
    blocks: list[Block] = [
        {"type": "header", "text": plain(f"💤 Snoozed ({len(snoozed)})", 150)},
    ]
    for task, snooze in snoozed[:MAX_SNOOZED_SHOWN]:
        url = task_url(kandev_url, task.task_id)
        text = f"*{link(url, _title(task))}*\n{snoozed_line(snooze)}"
        block = section(shorten_mrkdwn(text, MAX_SECTION_TEXT, note="…")[0])
        block["accessory"] = unsnooze_button(snooze.pending_id)
        blocks.append(block)
    if len(snoozed) > MAX_SNOOZED_SHOWN:
        blocks.append(context(f"…and {len(snoozed) - MAX_SNOOZED_SHOWN} more snoozed."))
    return blocks


def snoozed_in_listing(count: int) -> str:
    """The listing's line about what it hides: ``💤 2 questions snoozed by you…``."""
    what, are, them = ("question", "is", "it") if count == 1 else ("questions", "are", "them")
    return f"💤 {count} {what} snoozed by you {are} not listed: *Unsnooze* {them} on your App Home."


def back_text(task: TaskInfo) -> str:
    """The notice in a DM card's thread when its snooze ends."""
    return f"⏰ Back from snooze: {_said_title(task)} is still waiting for an answer"


# ---- what the person who chose is told (ephemeral, or their Home's notice) ----------------


def snoozed_message(snooze: Snooze, inbox: str | None = None) -> str:
    """``inbox``: how the person's Kandev Needs-you inbox followed (``in_step``, ``refused``,
    ``failed``; None: it is not theirs to change here)."""
    said = (
        f"💤 Snoozed for {_length(snooze.hours)}: until {slack_date(snooze.until)} it is off "
        "your App Home, your list and your DM cards. *Unsnooze* brings it back sooner."
    )
    return _with_inbox(said, inbox, _kandev_snoozed(snooze.hours))


def unsnoozed_message(inbox: str | None = None) -> str:
    said = "⏰ Unsnoozed: it is back on your App Home, your list and your DM cards."
    return _with_inbox(said, inbox, "It is back in your Kandev Needs-you inbox too.")


def _kandev_snoozed(hours: int) -> str:
    length = kandev_snooze(hours)
    if length is None:
        return "Your Kandev Needs-you inbox hides it too, until then."
    hours_there = dict(KANDEV_SNOOZES)[length]
    return f"Your Kandev Needs-you inbox hides it too (snoozed there for {_length(hours_there)})."


def _with_inbox(said: str, inbox: str | None, in_step: str) -> str:
    """What Slack did, then how the person's Kandev Needs-you inbox followed."""
    match inbox:
        case "in_step":
            return f"{said} {in_step}"
        case "refused":
            return (
                f"{said} Kandev no longer accepts the token you connected, so your Kandev "
                "Needs-you inbox was not changed: connect your Kandev account again "
                "(`/kandev-questions connect`)."
            )
        case "failed":
            return (
                f"{said} Your Kandev Needs-you inbox could not be changed (Kandev did not take "
                "the change): it stays as it was there."
            )
    return said


def not_snoozed_message() -> str:
    return "This question is not snoozed (its snooze ended or was undone): nothing to unsnooze."


def contended_message() -> str:
    return "Your snooze of this question changed at the same moment elsewhere: look again."
