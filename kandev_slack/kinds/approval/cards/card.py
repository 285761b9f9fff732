"""The Slack card of one approval (an agent's tool-permission request): pure rendering of
(approval, task, state, outcome) → message.

What the agent wants to do comes from the list's redacted ``action`` only (the command and its
directory, the file, the network destination): a one-line summary first, then the command,
whole or as its start and its end with "N characters not shown" between them and "Show whole
command" (text.py beside it); one button per option the agent offered, named as
the
agent named it; an "always" option asks for confirmation first (Slack's ``confirm`` dialog),
naming the command and saying what Kandev reports it allows. "Open in Kandev" is in a quiet
row of its own (kandev_slack/cards/parts/head.py), as on every card; no button is danger-styled.
Resolved,
the card is outcome-first: the outcome line (bold) right under the title, then what was asked;
the option buttons go. Everything stays within Block Kit's limits whatever Kandev sends.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, actions, button, context, section
from kandev_slack.cards.ids import ButtonValue, CodecError
from kandev_slack.cards.limits import (
    MAX_ACTIONS_ELEMENTS,
    MAX_MESSAGE_BLOCKS_TEXT,
    MAX_MESSAGE_TEXT,
    MAX_SECTION_TEXT,
    blocks_text_length,
    slack_len,
)
from kandev_slack.cards.mrkdwn import link
from kandev_slack.cards.parts.head import card_head, secondary_actions
from kandev_slack.cards.parts.taskline import (
    MAX_META_TASK_LINE,
    UNTITLED_TASK,
    task_line,
    task_url,
    urgency_prefix,
)
from kandev_slack.cards.text import fit_escaped, fit_plain, one_line
from kandev_slack.cards.wording import resolved_where, slack_date, who_resolved
from kandev_slack.core.approval import Approval, ToolAction, ToolOption
from kandev_slack.core.claims import Claim
from kandev_slack.core.domain import CardOutcome, CardState, TaskInfo, shown_outcome
from kandev_slack.kinds.approval.cards.text import (
    confirm_dialog,
    cut_notice,
    cwd_cut,
    description_line,
    plain_middle,
    summary_line,
    target_of,
    target_text,
    wants,
    whole_label,
)

MAX_TITLE = 300
MAX_DESCRIPTION = 300
MAX_WORKSPACE = 200
#: "Open in Kandev" is in the card's quiet row, its own actions block; the listing and Home
#: rows put it beside the options.
_OTHER_BUTTONS = 1
MAX_OPTION_BUTTONS = MAX_ACTIONS_ELEMENTS - _OTHER_BUTTONS

#: What an option's kind does, as the card's outcome line says it (a custom option has its own
#: name and one of these kinds; an unknown kind is named by the option).
KIND_DONE = {
    "allow_once": "Allowed once",
    "allow_always": "Always allowed",
    "reject_once": "Rejected",
    "reject_always": "Always rejected",
}


def action_text(action: ToolAction) -> str:
    """What the agent wants to do, in brief, as safe mrkdwn: what kind of action, a one-line
    summary (the program, the working directory, the length), the agent's own description
    (the redacted projection only). The command itself is in :func:`target_text`."""
    lines = [f"*The agent wants to {wants(action)}*"]
    summary = summary_line(action)
    if summary:
        lines.append(summary)
    if target_of(action):
        described = description_line(action, MAX_DESCRIPTION)
        if described:
            lines.append(described)
    elif action.description:
        lines.append(fit_escaped(one_line(action.description), MAX_DESCRIPTION)[0])
    else:
        lines.append("_Kandev did not say which tool or what with — open it in Kandev._")
    if action.redacted:
        lines.append("🔒 Kandev removed secrets from what is shown here.")
    return "\n".join(lines)


def option_done(option: ToolOption | None, option_id: str) -> tuple[str, bool]:
    """(what choosing it did, whether it allows): ``Always allowed``, ``Rejected``, or the
    option's own name when its kind is not one of ACP's four."""
    if option is None:
        return (f"Chose “{fit_escaped(one_line(option_id), 75)[0]}”", False)
    done = KIND_DONE.get(option.kind)
    name = fit_escaped(option.label, 75)[0]
    if done is None:
        return (f"Chose “{name}”", option.allows)
    if option.name and one_line(option.name).casefold() not in _DEFAULT_NAMES:
        done = f"{done} (“{name}”)"
    return (done, option.allows)


_DEFAULT_NAMES = frozenset(
    {"allow once", "allow", "always allow", "allow always", "reject", "reject once", "deny"}
    | {"always reject", "reject always", "always deny"}
)


def chosen_option(outcome: CardOutcome) -> str:
    """The option id an approval's outcome records ("" when none)."""
    for answer in outcome.answers:
        if answer.selected_options:
            return answer.selected_options[0]
    return ""


def approval_outcome_line(outcome: CardOutcome, approval: Approval) -> str:
    """The one line a resolved approval card carries: what was chosen, by whom, where
    (``Allowed once by Ben in Kandev``; :func:`~kandev_slack.cards.wording.who_resolved`)."""
    where = resolved_where(outcome)
    if outcome.state in (CardState.ANSWERED, CardState.REJECTED):
        option_id = chosen_option(outcome)
        done, allows = option_done(approval.option(option_id), option_id)
        mark = "✅" if allows else "⛔"
        return f"{mark} {done} {where}"
    if outcome.state is CardState.ENDED:
        return ENDED_LINES.get(outcome.reason, ENDED_LINES[""])
    if outcome.state is CardState.UNAVAILABLE:
        return "⚠️ Unavailable — Kandev no longer shows this task or its session to the bot"
    return "⏳ Waiting for a decision"


#: A withdrawn request's line, by the outcome's ``reason``.
ENDED_LINES = {
    "": (
        "⏹ Withdrawn — the agent no longer waits for this (it was stopped, started a new "
        "turn, or Kandev restarted)"
    ),
    "cancelled": "⏹ Cancelled in Kandev — the agent was told nobody chose",
    "turn_cancelled": (
        "⏹ Not answerable from Slack — the agent's turn was cancelled after it asked, and "
        "answering now would leave the session stuck in Kandev (a Kandev bug). Stop or "
        "restart the agent in Kandev."
    ),
}


#: A confirm dialog's text (Slack allows 300), unless the card's budget asks for less.
MAX_CONFIRM_TEXT = 300


def option_buttons(
    approval: Approval, pending_id: str, *, confirm_limit: int = MAX_CONFIRM_TEXT
) -> tuple[list[Block], int]:
    """One button per offered option (the first allow-once one primary) and how many options
    could not be offered as a button (too many, or an id too long for a button value). An
    "always" option asks first, naming the command and what Kandev says it allows."""
    buttons: list[Block] = []
    left_out = 0
    primary_done = False
    for index, option in enumerate(approval.options):
        if not approval.may_allow_here(option.option_id):
            continue  # Kandev cut what it would allow: allowed only in Kandev (cut_notice)
        if len(buttons) >= MAX_OPTION_BUTTONS:
            left_out += 1
            continue
        value = ButtonValue(pending_id=pending_id, option_id=option.option_id)
        try:
            encoded = value.encode()
        except CodecError:
            left_out += 1
            continue
        style = None
        if option.kind == "allow_once" and not primary_done:
            style, primary_done = "primary", True
        element = button(option.label, ids.approve_action_id(index), value=encoded, style=style)
        if option.always:
            element["confirm"] = confirm_dialog(option, approval.action, confirm_limit)
        buttons.append(element)
    return buttons, left_out


def whole_button(approval: Approval, pending_id: str, label: str | None = None) -> Block | None:
    """The button that opens the full view ("Show whole command"); None when the item's id
    does not fit a button's value."""
    try:
        value = ButtonValue(pending_id=pending_id).encode()
    except CodecError:
        return None
    return button(label or whole_label(approval.action), ids.ACTION_APPROVAL_VIEW, value=value)


#: What the card gives up, in turn, to stay within Slack's text budget of a whole message
#: when the agent offers many long "always" options: the command's room, then each confirm's.
_BUDGETS = (
    (MAX_SECTION_TEXT, MAX_CONFIRM_TEXT),
    (MAX_SECTION_TEXT, 250),
    (2000, 250),
    (1200, 250),
    (1200, 200),
    (800, 200),
)


def render_approval(
    approval: Approval,
    task: TaskInfo,
    state: CardState,
    outcome: CardOutcome | None,
    *,
    kandev_url: str,
    now: datetime,
    claim: Claim | None = None,
) -> dict[str, Any]:
    """The approval card for ``chat.postMessage`` / ``chat.update``: ``{"text", "blocks"}``,
    within every Block Kit limit and the text budget of a whole message whatever the agent
    offers (the command's room and the confirms shrink first; options that still do not fit
    are counted and left to Kandev)."""
    for command_room, confirm_limit in _BUDGETS:
        blocks = _approval_blocks(
            approval, task, state, outcome, kandev_url, now, claim, command_room, confirm_limit
        )
        if blocks_text_length(blocks) <= MAX_MESSAGE_BLOCKS_TEXT:
            break
    final = shown_outcome(state, outcome, now)
    title = fit_plain(one_line(task.title) or UNTITLED_TASK, MAX_TITLE)[0]
    return {"text": _fallback_text(approval, task, title, final), "blocks": blocks}


def _approval_blocks(
    approval: Approval,
    task: TaskInfo,
    state: CardState,
    outcome: CardOutcome | None,
    kandev_url: str,
    now: datetime,
    claim: Claim | None,
    command_room: int,
    confirm_limit: int,
) -> list[Block]:
    url = task_url(kandev_url, approval.task_id or task.task_id)
    final = shown_outcome(state, outcome, now)
    title = fit_plain(one_line(task.title) or UNTITLED_TASK, MAX_TITLE)[0]
    done = approval_outcome_line(final, approval) if final is not None else None
    at = final.at if final is not None else None
    meta = _meta_line(approval, task)
    urgency = urgency_prefix(task)
    blocks = card_head(url, title, meta=meta, outcome=done, at=at, claim=claim, urgency=urgency)
    blocks.append(section(action_text(approval.action), block_id=ids.BLOCK_TOOL))
    target, hidden = target_text(approval.action, command_room)
    if target:
        blocks.append(section(target, block_id=ids.BLOCK_TARGET))
    if approval.action.cut_by_kandev:
        blocks.append(context(cut_notice(approval.action, final is None), block_id=ids.BLOCK_CUT))
    shortened = hidden or cwd_cut(approval.action)  # the directory's whole is a click away too
    if shortened and (whole := whole_button(approval, approval.item_id)) is not None:
        blocks.append(actions([whole], block_id=ids.BLOCK_WHOLE))
    if final is None:
        buttons, left_out = option_buttons(approval, approval.item_id, confirm_limit=confirm_limit)
        spare = MAX_MESSAGE_BLOCKS_TEXT - blocks_text_length(blocks) - _REST
        while buttons and blocks_text_length(buttons) > spare:
            buttons.pop()
            left_out += 1
        if buttons:
            blocks.append(actions(buttons, block_id=ids.BLOCK_ACTIONS))
        if left_out:
            more = f"{left_out} more options are not shown here — {link(url, 'open it in Kandev')}"
            blocks.append(context(more, block_id=ids.BLOCK_NOTICE))
    waiting = final is None
    blocks.append(
        secondary_actions(url, pending_id=approval.item_id, claimable=waiting, claim=claim)
    )
    return blocks


#: Room kept for what follows the option buttons (the "more options" note, the quiet row).
_REST = 400


def _meta_line(approval: Approval, task: TaskInfo) -> str:
    """One grey line: approval needed, agent, priority, labels, workspace, when asked."""
    parts = ["🔐 *Approval needed*"]
    line = task_line(task, limit=MAX_META_TASK_LINE)
    if line:
        parts.append(line)
    workspace = one_line(task.workspace_name)
    if workspace:
        parts.append("Workspace *" + fit_escaped(workspace, MAX_WORKSPACE)[0] + "*")
    parts.append(f"asked {slack_date(approval.created_at)}")
    return " · ".join(parts)


def _fallback_text(
    approval: Approval, task: TaskInfo, title: str, final: CardOutcome | None
) -> str:
    """The notification text: the priority of an urgent task, what the agent wants — the
    command itself (its start and its end), not only the agent's description of it — and on
    which task (escaped, no one mentioned)."""
    asked = f"Approval needed: {wanted_line(approval)} — {title}"
    if final is None:
        return fit_escaped(urgency_prefix(task) + asked, MAX_MESSAGE_TEXT)[0]
    # Nobody is mentioned in a notification: the line without who.
    line = approval_outcome_line(final.model_copy(update={"by_user": None}), approval)
    room = MAX_MESSAGE_TEXT - slack_len(line) - 3
    return f"{line} — {fit_escaped(asked, room)[0]}"


def wanted_line(approval: Approval, limit: int = 300) -> str:
    """Plain text: ``run a command: rm -rf build`` — the command (or path, or destination)
    itself, its start and its end when long; the agent's description when it names none."""
    a = approval.action
    target = target_of(a)
    if target:
        return f"{wants(a)}: {plain_middle(target, limit)}"
    return fit_plain(approval.headline, limit)[0]


# ---- what the person is told of an approval -----------------------------------------------------


def _chosen(approval: Approval, outcome: CardOutcome) -> str:
    """What the outcome's option did: ``Allowed once``, ``Always rejected``…"""
    option_id = chosen_option(outcome)
    return option_done(approval.option(option_id), option_id)[0]


def approval_lost_message(approval: Approval, winner: CardOutcome) -> str:
    """For the person whose choice came second: who chose first and what; theirs not sent."""
    if winner.state in (CardState.ENDED, CardState.UNAVAILABLE):
        return approval_ended_message(winner)
    who = who_resolved(winner)
    if winner.via == "slack":
        where = who or "Someone in Slack"
        return f"{where} chose first: {_chosen(approval, winner)}. Your choice was not sent."
    where = f"{who} chose first in Kandev" if who else "Someone in Kandev chose first"
    return f"{where}: {_chosen(approval, winner)}. Your choice was not sent."


def approval_undecided_message(approval: Approval, recorded: CardOutcome) -> str:
    return (
        f"Kandev recorded “{_chosen(approval, recorded)}” for this request, but someone else "
        "may have chosen first: the bot cannot tell whether your choice reached the agent. "
        "Open the task in Kandev to see what it got."
    )


def approval_already_message(approval: Approval, outcome: CardOutcome) -> str:
    return f"You already chose: {_chosen(approval, outcome)}. Nothing more was sent."


def approval_ended_message(outcome: CardOutcome) -> str:
    """Why a request can no longer be answered; nothing was sent."""
    if outcome.state is CardState.UNAVAILABLE:
        return (
            "Kandev no longer shows this request's task or session to the bot, so nothing was sent."
        )
    if outcome.reason == "cancelled":
        return "This request was cancelled in Kandev. Nothing was sent."
    if outcome.reason == "turn_cancelled":
        return (
            "Nothing was sent: the agent's turn was cancelled after it asked, and answering "
            "now would leave its session stuck in Kandev (a Kandev bug). Stop or restart the "
            "agent in Kandev; it will ask again if it still needs to."
        )
    return (
        "The agent no longer waits for this request (it was stopped, started a new turn, or "
        "Kandev restarted). Nothing was sent."
    )
