"""An approval's full view (pure): the whole command — or path, or destination — one click
from the card, the listing and the App Home, with the options to choose from while it waits.

The view is a modal: at most 100 blocks, each section at most 3,000 characters, and (as for a
message) at most ``MAX_MESSAGE_BLOCKS_TEXT`` characters of text altogether. A text that does
not fit shows as its start and its end, and the whole of it goes to the card's thread as
consecutive code-block replies (:func:`thread_parts`): the view says so.
"""

from __future__ import annotations

from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, actions, context, plain, section
from kandev_slack.cards.limits import (
    MAX_MESSAGE_BLOCKS_TEXT,
    MAX_MESSAGE_TEXT,
    MAX_SECTION_TEXT,
    MAX_VIEW_BLOCKS,
    MAX_VIEW_TITLE,
    blocks_text_length,
    slack_len,
)
from kandev_slack.cards.mrkdwn import link
from kandev_slack.cards.taskline import UNTITLED_TASK, task_url
from kandev_slack.cards.text import fit_plain, grapheme_boundary, one_line
from kandev_slack.core.approval import Approval
from kandev_slack.core.domain import Card, CardOutcome
from kandev_slack.kinds.approval.cards.card import (
    action_text,
    approval_outcome_line,
    option_buttons,
)
from kandev_slack.kinds.approval.cards.text import (
    code_block_text,
    cut_notice,
    cwd_cut,
    not_shown,
    render_code,
    target_of,
    wants,
)

#: One piece of the text per section: its code fences and the section's limit.
PIECE = MAX_SECTION_TEXT - 20
#: The text room of one thread reply (a message's ``text``, which Slack cuts beyond 4,000).
THREAD_PIECE = MAX_MESSAGE_TEXT - 200
#: What the view keeps for everything but the text's pieces (title, summary, options).
_VIEW_REST = 3_000


def pieces(text: str, size: int) -> list[str]:
    """``text`` in consecutive pieces whose rendered code (``render_code``) is at most
    ``size`` each; joined, they are the text (no character lost, none repeated)."""
    out: list[str] = []
    start = 0
    while start < len(text):
        end = _end_within(text, start, size)
        out.append(text[start:end])
        start = end
    return out


def _end_within(text: str, start: int, size: int) -> int:
    """The end of the longest piece from ``start`` (at least one grapheme, preferably at a
    line's end) whose rendered code fits ``size``."""
    total, end = 0, start
    while end < len(text):
        ch = text[end]
        total += slack_len(render_code(ch)) + (1 if ch == "`" else 0)
        if total > size:
            break
        end += 1
    if end < len(text):
        line = text.rfind("\n", start, end)
        if line > start + (end - start) // 2:
            end = line + 1
        else:
            cut = grapheme_boundary(text, end)
            end = cut if cut > start else max(end, start + 1)
    # the estimate misses what defusing adds (a word joiner in "@here"): check, and shrink
    while end - start > 1 and slack_len(render_code(text[start:end])) > size:
        end = start + max(1, (end - start) * 9 // 10)
    return end


def _piece_section(index: int, piece: str) -> Block:
    return section(f"```\n{render_code(piece) or ' '}\n```", block_id=f"{ids.BLOCK_PART}:{index}")


#: The most a working directory the summary shortens takes in the view (its pieces).
_CWD_ROOM = 4_500


def _cwd_parts(approval: Approval) -> list[str] | None:
    """A working directory the summary line shortens, in pieces, when the view holds it
    whole (None: not shortened, or too long for the view: its start and its end then)."""
    if not cwd_cut(approval.action):
        return None
    parts = pieces(approval.action.cwd, PIECE)
    cost = sum(slack_len(render_code(p)) + 8 for p in parts)
    return parts if cost <= _CWD_ROOM else None


def _cwd_blocks(approval: Approval) -> list[Block]:
    """The working directory whole (or, beyond the view's room, its start and its end)
    when the summary line shows only its start and its end."""
    if not cwd_cut(approval.action):
        return []
    cwd = approval.action.cwd
    head = context(f"The working directory: {len(cwd):,} characters.")
    parts = _cwd_parts(approval)
    if parts is None:
        shown, _ = code_block_text(cwd, _CWD_ROOM // 2)
        return [head, section(shown, block_id=f"{ids.BLOCK_CWD}:0")]
    return [head] + [
        section(f"```\n{render_code(p) or ' '}\n```", block_id=f"{ids.BLOCK_CWD}:{i}")
        for i, p in enumerate(parts)
    ]


def fits_view(approval: Approval) -> bool:
    """Whether the whole text fits in the view (else it goes to the card's thread)."""
    text = target_of(approval.action)
    parts = pieces(text, PIECE)
    room = MAX_MESSAGE_BLOCKS_TEXT - _VIEW_REST - (_CWD_ROOM if cwd_cut(approval.action) else 0)
    return (
        len(parts) <= MAX_VIEW_BLOCKS - 10
        and sum(slack_len(render_code(p)) + 8 for p in parts) <= room
    )


def whole_view(
    card: Card,
    *,
    kandev_url: str,
    metadata: str,
    waiting: bool,
    in_thread: bool = False,
) -> dict[str, Any]:
    """The full view of ``card``'s approval: the summary, then the whole text in consecutive
    code blocks (or, beyond the view's room, its start and its end and where the whole is:
    ``in_thread`` when it is being posted in the card's thread), then the option buttons
    while it ``waiting`` (the same buttons, the same pipeline as the card's)."""
    approval = card.approval
    url = task_url(kandev_url, approval.task_id or card.task_id)
    title = fit_plain(one_line(card.task.title) or UNTITLED_TASK, 200)[0]
    blocks: list[Block] = [
        section(f"*{link(url, title)}*", block_id=ids.BLOCK_TITLE),
        section(action_text(approval.action), block_id=ids.BLOCK_TOOL),
        *_cwd_blocks(approval),
    ]
    text = target_of(approval.action)
    if text and fits_view(approval):
        parts = pieces(text, PIECE)
        blocks.append(context(f"The whole {_noun(approval)}: {len(text):,} characters."))
        blocks += [_piece_section(i, p) for i, p in enumerate(parts)]
    elif text:
        shown, middle = code_block_text(text, MAX_SECTION_TEXT)
        blocks.append(section(shown, block_id=ids.BLOCK_TARGET))
        where = (
            "it is being posted in the card's thread, in consecutive parts"
            if in_thread
            else "open it in Kandev"
        )
        blocks.append(
            context(
                f"This {_noun(approval)} is {len(text):,} characters long, more than this "
                f"window holds ({not_shown(middle.hidden)} here): {where}."
            )
        )
    if approval.action.cut_by_kandev:
        blocks.append(context(cut_notice(approval.action, waiting), block_id=ids.BLOCK_CUT))
    if waiting:
        spare = MAX_MESSAGE_BLOCKS_TEXT - blocks_text_length(blocks) - 300
        for confirm_limit in (250, 200, 150):  # the confirms shrink before an option goes
            buttons, left_out = option_buttons(
                approval, card.pending_id, confirm_limit=confirm_limit
            )
            if blocks_text_length(buttons) <= spare:
                break
        while buttons and blocks_text_length(buttons) > spare:
            buttons.pop()
            left_out += 1
        if buttons:
            blocks.append(context("Decide here, as on the card:"))
            blocks.append(actions(buttons, block_id=ids.BLOCK_ACTIONS))
        if left_out:
            more = f"{left_out} more options are not shown here — {link(url, 'open it in Kandev')}"
            blocks.append(context(more, block_id=ids.BLOCK_NOTICE))
    elif card.outcome is not None or card.state.terminal:
        outcome = card.outcome or CardOutcome(state=card.state, at=card.updated_at)
        blocks.append(section(f"*{approval_outcome_line(outcome, approval)}*"))
    return {
        "type": "modal",
        "callback_id": ids.CALLBACK_APPROVAL_VIEW,
        "title": plain(_title(approval), MAX_VIEW_TITLE),
        "close": plain("Close", MAX_VIEW_TITLE),
        "private_metadata": metadata,
        "blocks": blocks[:MAX_VIEW_BLOCKS],
    }


def _noun(approval: Approval) -> str:
    return {"command": "command", "network": "address"}.get(approval.action.type, "path")


def _title(approval: Approval) -> str:
    return {"command": "Whole command", "network": "Whole address"}.get(
        approval.action.type, "Whole path"
    )


def thread_parts(approval: Approval) -> list[str]:
    """The whole text as consecutive thread replies (each a message's ``text``: a header
    line and one code block), for a text beyond the full view's room."""
    text = target_of(approval.action)
    parts = pieces(text, THREAD_PIECE)
    total = len(parts)
    return [
        f"Whole {_noun(approval)} to {wants(approval.action).split(' ', 1)[0]}, part "
        f"{index + 1} of {total}:\n```\n{render_code(part) or ' '}\n```"
        for index, part in enumerate(parts)
    ]
