"""An approval as a row of the ``/kandev-questions`` listing and of the App Home (pure): its
task, what it wants — the command's start and its end when long, with how many characters are
not shown — its age, and **Review and decide…**, which opens its full view
(view.py beside it) where its options are: no Allow is offered beside a shortened
command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, button, context, section
from kandev_slack.cards.mrkdwn import link
from kandev_slack.cards.parts.taskline import UNTITLED_TASK, task_url
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


#: A group row links at most this many cards (then "+N more").
MAX_ROW_LINKS = 20


def agents_links(
    members: Sequence[tuple[Card, str | None]], *, kandev_url: str, limit: int = MAX_ROW_LINKS
) -> str:
    """``*3 agents*: 1 · 2 · 3``: each number a link to that approval's card (else its task in
    Kandev); those beyond ``limit`` counted."""
    parts = []
    for number, (card, permalink) in enumerate(members[:limit], 1):
        url = permalink or task_url(kandev_url, card.approval.task_id or card.task_id)
        parts.append(f"<{escape_url(url)}|{number}>")
    if len(members) > limit:
        parts.append(f"+{len(members) - limit} more")
    return f"*{len(members)} agents*: " + " · ".join(parts)


def approval_row(
    card: Card,
    permalink: str | None,
    *,
    kandev_url: str,
    with_buttons: bool = True,
    others: Sequence[tuple[Card, str | None]] = (),
) -> list[Block]:
    """One waiting approval as a row: its task, what it wants, its age; "Review and decide…"
    (the full view, where its options are) and "Open in Kandev". No option is offered beside
    a shortened command: the choice is made in the full view, or on the card.

    With ``others`` (identical approvals waiting in its channel, issue 33) it is a group row:
    "3 agents" with a link to each card; each is decided on its own card (the first one
    here)."""
    approval = card.approval
    url = task_url(kandev_url, approval.task_id or card.task_id)
    title = fit_plain(one_line(card.task.title) or UNTITLED_TASK, MAX_TITLE)[0]
    text = f"*{link(url, title)}* · {approval_line(approval)}"
    meta = [f"asked {slack_date(approval.created_at)}"]
    if others:
        meta.append(agents_links([(card, permalink), *others], kandev_url=kandev_url))
    elif permalink:
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
    rows: Sequence[tuple[Card, str | None]],
    *,
    kandev_url: str,
    limit: int,
    others: Mapping[str, Sequence[tuple[Card, str | None]]] | None = None,
) -> list[Block]:
    """The "Approvals waiting" part of a listing or Home: a header line and up to ``limit``
    rows (the rest counted, pointing at their cards); nothing when none wait. ``others``: by
    a row's pending id, the identical approvals it stands for too (one group row, counted
    as its approvals)."""
    if not rows:
        return []
    grouped = others or {}
    count = sum(1 + len(grouped.get(card.pending_id, ())) for card, _ in rows)
    what = "1 approval waits" if count == 1 else f"{count} approvals wait"
    blocks: list[Block] = [section(f"*🔐 {what} for a decision*")]
    for card, permalink in rows[:limit]:
        members = grouped.get(card.pending_id, ())
        blocks += approval_row(card, permalink, kandev_url=kandev_url, others=members)
    more = sum(1 + len(grouped.get(card.pending_id, ())) for card, _ in rows[limit:])
    if more:
        blocks.append(context(f"…and {more} more: see their cards in their channels."))
    return blocks
