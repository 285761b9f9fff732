"""An approval as a row of the ``/kandev-questions`` listing and of the App Home (pure): its
task, what it wants — the command's start and its end when long, with how many characters are
not shown — its age, and **Review and decide…**, which opens its full view
(view.py beside it) where its options are: no Allow is offered beside a shortened
command."""

from __future__ import annotations

from collections.abc import Sequence

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, button, context, section
from kandev_slack.cards.mrkdwn import link
from kandev_slack.cards.taskline import UNTITLED_TASK, task_url
from kandev_slack.cards.text import escape_url, fit_plain, one_line
from kandev_slack.cards.wording import slack_date
from kandev_slack.core.approval import Approval
from kandev_slack.core.domain import Card
from kandev_slack.kinds.approval.cards.card import MAX_TITLE, whole_button
from kandev_slack.kinds.approval.cards.text import inline_middle, target_of, wants

MAX_ROW_ACTION = 300


def approval_line(approval: Approval) -> str:
    """``wants to run a command: `rm -rf build``` (safe mrkdwn, one line; a long command as
    its start and its end with how many characters are not shown)."""
    a = approval.action
    what = target_of(a) or a.description
    shown = f": {inline_middle(what, MAX_ROW_ACTION)[0]}" if what else ""
    return f"🔐 wants to {wants(a)}{shown}"


def approval_row(
    card: Card, permalink: str | None, *, kandev_url: str, with_buttons: bool = True
) -> list[Block]:
    """One waiting approval as a row: its task, what it wants, its age; "Review and decide…"
    (the full view, where its options are) and "Open in Kandev". No option is offered beside
    a shortened command: the choice is made in the full view, or on the card."""
    approval = card.approval
    url = task_url(kandev_url, approval.task_id or card.task_id)
    title = fit_plain(one_line(card.task.title) or UNTITLED_TASK, MAX_TITLE)[0]
    text = f"*{link(url, title)}* · {approval_line(approval)}"
    meta = [f"asked {slack_date(approval.created_at)}"]
    if permalink:
        meta.append(f"<{escape_url(permalink)}|View card>")
    text += "\n" + " · ".join(meta)
    blocks: list[Block] = [section(text)]
    if with_buttons:
        elements = [button("Open in Kandev", ids.ACTION_OPEN, url=url)]
        review = whole_button(approval, card.pending_id, REVIEW_LABEL)
        if review is not None:
            review["style"] = "primary"
            elements.insert(0, review)
        blocks.append({"type": "actions", "elements": elements})
    return blocks


#: The listing's and Home's way to an approval's options: through its full view.
REVIEW_LABEL = "Review and decide…"


def approvals_blocks(
    rows: Sequence[tuple[Card, str | None]], *, kandev_url: str, limit: int
) -> list[Block]:
    """The "Approvals waiting" part of a listing or Home: a header line and up to ``limit``
    rows (the rest counted, pointing at their cards); nothing when none wait."""
    if not rows:
        return []
    count = len(rows)
    what = "1 approval waits" if count == 1 else f"{count} approvals wait"
    blocks: list[Block] = [section(f"*🔐 {what} for a decision*")]
    for card, permalink in rows[:limit]:
        blocks += approval_row(card, permalink, kandev_url=kandev_url)
    if count > limit:
        blocks.append(context(f"…and {count - limit} more: see their cards in their channels."))
    return blocks
