"""The App Home tab: pure rendering of what is waiting and what was resolved lately.

A Home view holds at most 100 blocks: ``MAX_WAITING`` bundles (three blocks each) and
``MAX_RESOLVED`` resolved cards (one block each) plus headers always fit; anything beyond is
counted, with a pointer to ``/kandev-questions``.

Identical items waiting in one channel are one row (the first card's headline, "3 agents"
with a link to each card, "Answer for all…"), counted as its items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, button, context, divider, plain, section
from kandev_slack.cards.ids import COMMAND, ButtonValue
from kandev_slack.cards.limits import MAX_HEADER_TEXT, MAX_SECTION_TEXT, MAX_VIEW_BLOCKS
from kandev_slack.cards.mrkdwn import link, markdown_to_mrkdwn
from kandev_slack.cards.parts.claims import short_claim
from kandev_slack.cards.parts.taskline import UNTITLED_TASK, task_line, task_url
from kandev_slack.cards.text import escape_url, fit_escaped, fit_plain, one_line, shorten_mrkdwn
from kandev_slack.cards.wording import asked_at, slack_date
from kandev_slack.core.domain import Card, CardOutcome, TaskInfo
from kandev_slack.core.snooze import Snooze
from kandev_slack.kinds.approval.cards.rows import approvals_blocks
from kandev_slack.kinds.question.cards.fields import question_heading
from kandev_slack.surfaces.kinds import card_outcome_line
from kandev_slack.surfaces.listing import agents_links, answer_label, questions_waiting
from kandev_slack.surfaces.snooze import MAX_SNOOZED_SHOWN, snooze_select, snoozed_home_blocks
from kandev_slack.surfaces.waiting import Waiting

CALLBACK_HOME = "kq_home"
MAX_WAITING = 20
MAX_RESOLVED = 10
_BLOCKS_PER_WAITING = 3  # title + first question, context, buttons
_FIXED_BLOCKS = 11  # notice + divider, 2 headers, 2 intros, divider, 2 "more" notes, 2 empties
MAX_TITLE = 200
MAX_PROMPT = 400
#: Approvals shown at the top (two blocks each, a header line, a "more" note and a divider).
MAX_APPROVALS = 3
_APPROVAL_BLOCKS = MAX_APPROVALS * 2 + 3
#: The person's snoozed items: a header, one block each, a "more" note and a divider.
_SNOOZED_BLOCKS = MAX_SNOOZED_SHOWN + 3
assert (
    MAX_WAITING * _BLOCKS_PER_WAITING
    + MAX_RESOLVED
    + _FIXED_BLOCKS
    + _APPROVAL_BLOCKS
    + _SNOOZED_BLOCKS
    <= MAX_VIEW_BLOCKS
)


def _header(text: str) -> Block:
    return {"type": "header", "text": plain(text, MAX_HEADER_TEXT)}


def _title(task_title: str) -> str:
    return fit_plain(one_line(task_title) or UNTITLED_TASK, MAX_TITLE)[0]


def _first_question(item: Waiting, url: str) -> str:
    questions = item.bundle.questions
    if not questions:
        return ""
    first = questions[0]
    heading = fit_escaped(question_heading(0, len(questions), first), 150)[0]
    prompt = one_line(markdown_to_mrkdwn(first.prompt))
    text = f"*{heading}*"
    if prompt:
        note = f"… <{escape_url(url)}|more>"
        text += " — " + shorten_mrkdwn(prompt, MAX_PROMPT, note=note)[0]
    if len(questions) > 1:
        text += f"\n_+{len(questions) - 1} more question{'s' if len(questions) > 2 else ''}_"
    return text


def waiting_blocks(item: Waiting, *, kandev_url: str, now: datetime) -> list[Block]:
    """Task, first question, when asked (and a link to Kandev), then "Answer…" (the one
    primary button), "Conversation" and "Snooze…"."""
    url = task_url(kandev_url, item.bundle.task_id or item.task.task_id)
    text = f"*{link(url, _title(item.task.title))}*"
    question = _first_question(item, url)
    if question:
        text += "\n" + question
    agents = agents_links(item, kandev_url=kandev_url)
    if agents:
        text += "\n" + agents
    meta = [asked_at(item.bundle.created_at)]
    if (claim := item.claim(now)) is not None:
        meta.append(short_claim(claim))
    workspace = one_line(item.task.workspace_name)
    if workspace:
        meta.append("Workspace *" + fit_escaped(workspace, 200)[0] + "*")
    if item.permalink and not item.others:  # (a group row links each card: "3 agents")
        meta.append(f"<{escape_url(item.permalink)}|View card>")
    meta.append(link(url, "Open in Kandev"))
    line = task_line(item.task)
    if line:
        meta.append(line)
    value = ButtonValue(pending_id=item.bundle.pending_id).encode()
    buttons = [
        button(answer_label(item), ids.ACTION_ANSWER_MODAL, value=value, style="primary"),
        button(
            "Conversation",
            ids.ACTION_CONVERSATION,
            value=ButtonValue(pending_id=item.bundle.pending_id, conversation=True).encode(),
        ),
    ]
    # (a group row stands for several items: its select snoozes each the person may see)
    select = snooze_select(item.bundle.pending_id, group=bool(item.others))
    if select is not None:
        buttons.append(select)
    return [
        section(shorten_mrkdwn(text, MAX_SECTION_TEXT, note="…")[0]),
        context(" · ".join(meta)),
        {"type": "actions", "elements": buttons},
    ]


def resolved_block(card: Card, permalink: str | None, *, kandev_url: str) -> Block:
    """Who/where/what: the task, and the card's outcome line with its time."""
    url = task_url(kandev_url, card.item.task_id or card.task_id)
    outcome = card.outcome or CardOutcome(state=card.state, at=card.updated_at)
    line = card_outcome_line(card, outcome)
    text = f"*{link(url, _title(card.task.title))}*"
    if permalink:
        text += f" · <{escape_url(permalink)}|View card>"
    text += f"\n{line} · {slack_date(outcome.at)}"
    return section(shorten_mrkdwn(text, MAX_SECTION_TEXT, note="…")[0])


def render_home(
    waiting: Sequence[Waiting],
    resolved: Sequence[tuple[Card, str | None]],
    *,
    kandev_url: str,
    now: datetime,
    stale: bool = False,
    notice: str | None = None,
    approvals: Sequence[tuple[Card, str | None]] = (),
    snoozed: Sequence[tuple[TaskInfo, Snooze]] = (),
    approval_others: Mapping[str, Sequence[tuple[Card, str | None]]] | None = None,
) -> dict[str, Any]:
    """The Home view: "Waiting for an answer" (in the listing's order: critical first, then
    high, then the rest, each oldest first; one primary button a row), what the person snoozed
    (``snoozed``: "💤 Snoozed", with Unsnooze) and "Recently resolved".

    ``stale``: Kandev could not be asked, ``waiting`` is what the bot last knew. ``notice``:
    what the bot tells this person about their last interaction here (safe mrkdwn).
    """
    blocks: list[Block] = []
    if notice:
        text = shorten_mrkdwn(notice, MAX_SECTION_TEXT, note="…")[0]
        blocks += [section(text, block_id=ids.BLOCK_NOTICE), divider()]
    approval_rows = approvals_blocks(
        approvals, kandev_url=kandev_url, limit=MAX_APPROVALS, others=approval_others
    )
    if approval_rows:
        blocks += [*approval_rows, divider()]
    blocks.append(_header("Waiting for an answer"))
    updated = f"updated {slack_date(now, '{time}')}"
    if waiting:  # (nothing waiting: one message says so, below)
        order = "critical first, then oldest"
        count = sum(row.count for row in waiting)  # a group row counts as its items
        blocks.append(context(f"{questions_waiting(count)}, {order} · {updated}"))
    if stale:
        blocks.append(
            context(
                "⚠️ Kandev cannot be reached right now: this is what the bot last knew. "
                "Answers cannot be sent until it is back."
            )
        )
    if not waiting:
        blocks.append(section(f"Nothing is waiting for an answer. 🎉 _({updated})_"))
    for item in waiting[:MAX_WAITING]:
        blocks += waiting_blocks(item, kandev_url=kandev_url, now=now)
    if len(waiting) > MAX_WAITING:
        more = sum(row.count for row in waiting[MAX_WAITING:])
        blocks.append(context(f"…and {more} more: `{COMMAND}` lists them all."))

    blocks.append(divider())
    snoozed_rows = snoozed_home_blocks(snoozed, kandev_url=kandev_url)
    if snoozed_rows:
        blocks += [*snoozed_rows, divider()]
    blocks.append(_header("Recently resolved"))
    if not resolved:
        blocks.append(context("Nothing resolved yet."))
    for card, permalink in resolved[:MAX_RESOLVED]:
        blocks.append(resolved_block(card, permalink, kandev_url=kandev_url))
    return {"type": "home", "callback_id": CALLBACK_HOME, "blocks": blocks[:MAX_VIEW_BLOCKS]}
