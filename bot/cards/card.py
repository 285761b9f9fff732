"""The Slack card of one bundle: pure rendering of (bundle, task, state, outcome) → message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlsplit

from bot.cards import ids
from bot.cards.blocks import Block, actions, button, context, divider, section
from bot.cards.ids import ButtonValue, CodecError
from bot.cards.limits import (
    MAX_ACTIONS_ELEMENTS,
    MAX_MESSAGE_BLOCKS,
    MAX_MESSAGE_BLOCKS_TEXT,
    MAX_MESSAGE_TEXT,
    MAX_SECTION_TEXT,
    blocks_text_length,
    slack_len,
)
from bot.cards.mrkdwn import MAX_LINK_URL, link, markdown_to_mrkdwn
from bot.cards.taskline import task_line
from bot.cards.text import (
    fit_escaped,
    fit_plain,
    one_line,
    shorten_mrkdwn,
    shortened_note,
)
from bot.cards.wording import age_text, choices_summary, outcome_line, slack_date, user_mention
from bot.core.clarification import Answer, Bundle, Question
from bot.core.domain import CardOutcome, CardState, PastAnswer, TaskInfo, shown_outcome

UNTITLED_TASK = "Untitled task"
MAX_TITLE = 300
MAX_WORKSPACE = 200
MAX_QUESTION_TITLE = 150
MAX_FREE_TEXT_SHOWN = 1000
FALLBACK_PROMPT = 200
_FIXED_BLOCKS = 8  # title, task line, meta, outcome, context, past answer, actions, notice
_BLOCKS_PER_QUESTION = 3  # divider, question, options
_NON_OPTION_BUTTONS = 4  # Other answer…, Reject…, Conversation, Open in Kandev


def task_url(kandev_url: str, task_id: str) -> str:
    """``{kandev_url}/t/{task_id}``; raises ValueError unless it is a usable http(s) URL."""
    url = f"{kandev_url.rstrip('/')}/t/{quote(task_id, safe='')}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(url) > MAX_LINK_URL:
        raise ValueError(f"not a usable Kandev link (http(s), at most {MAX_LINK_URL}): {url!r}")
    return url


def question_heading(index: int, total: int, question: Question) -> str:
    """``1/3 · Database`` (plain text; ``Database`` alone for a one-question bundle)."""
    title = fit_plain(one_line(question.title), MAX_QUESTION_TITLE)[0]
    if total <= 1:
        return title or "Question"
    return f"{index + 1}/{total} · {title}" if title else f"Question {index + 1}/{total}"


def _answer_for(outcome: CardOutcome | None, question: Question) -> Answer | None:
    if outcome is None or outcome.state is not CardState.ANSWERED:
        return None
    return next((a for a in outcome.answers if a.question_id == question.question_id), None)


def question_text(
    index: int, total: int, question: Question, note: str, *, budget: int = MAX_SECTION_TEXT
) -> str:
    heading = "*" + fit_escaped(question_heading(index, total, question), MAX_QUESTION_TITLE)[0]
    heading += "*"
    prompt = markdown_to_mrkdwn(question.prompt)
    if not prompt:
        return heading
    room = budget - slack_len(heading) - 1
    return heading + "\n" + shorten_mrkdwn(prompt, room, note=note)[0]


def options_text(
    question: Question, answer: Answer | None, note: str, *, budget: int = MAX_SECTION_TEXT
) -> str:
    """The options with descriptions (chosen ones marked ✅), and a free-text answer if any,
    within ``budget``."""
    chosen = set(answer.selected_options) if answer else set()
    free_text = one_line(answer.custom_text) if answer else ""
    count = len(question.options) + (1 if free_text else 0)
    if count == 0:
        return ""
    reserve = slack_len(note) + 1
    share = (budget - reserve) // count - 1
    lines: list[str] = []
    shortened = False
    for option in question.options:
        mark = "✅" if option.option_id in chosen else "•"
        head = f"{mark} *"
        desc_raw = one_line(option.description)
        desc_full = fit_escaped(desc_raw, MAX_SECTION_TEXT)[0]
        desc_room = min(slack_len(desc_full), share // 2) + 3 if desc_raw else 0
        label_room = share - slack_len(head) - 1 - desc_room
        label, cut_label = fit_escaped(one_line(option.label) or "(no label)", label_room)
        line = f"{head}{label}*"
        if desc_raw:
            desc, cut_desc = fit_escaped(desc_raw, share - slack_len(line) - 3)
            line += f" — {desc}"
            shortened = shortened or cut_desc
        shortened = shortened or cut_label
        lines.append(line)
    if free_text:
        head = "✅ _Free text:_ “"
        room = min(MAX_FREE_TEXT_SHOWN, share - slack_len(head) - 1)
        text, cut_text = fit_escaped(free_text, room)
        lines.append(f"{head}{text}”")
        shortened = shortened or cut_text
    if shortened:
        lines.append(note)
    return "\n".join(lines)


def _meta_line(bundle: Bundle, task: TaskInfo, now: datetime) -> str:
    parts = []
    workspace = one_line(task.workspace_name)
    if workspace:
        parts.append("Workspace *" + fit_escaped(workspace, MAX_WORKSPACE)[0] + "*")
    parts.append(f"{age_text(bundle.created_at, now)} ({slack_date(bundle.created_at)})")
    count = len(bundle.questions)
    if count > 1:
        parts.append(f"{count} questions, answer all together")
    return " · ".join(parts)


MAX_PAST_SUMMARY = 500


def past_line(past: PastAnswer, now: datetime) -> str:
    """``↩ Last answered 3 days ago by @ana: PostgreSQL`` (safe mrkdwn)."""
    ago = age_text(past.at, now).removeprefix("asked ")
    who = user_mention(past.by_user) if past.via == "slack" else None
    where = f"by {who}" if who else "in Slack" if past.via == "slack" else "in Kandev"
    line = f"↩ Last answered {ago} {where}"
    worded = choices_summary(past.choices) if past.choices else past.summary  # legacy rows
    summary = shorten_mrkdwn(worded, MAX_PAST_SUMMARY, note="…")[0] if worded else ""
    return f"{line}: {summary}" if summary else line


def _option_buttons(bundle: Bundle) -> list[Block] | None:
    """One button per option of a one-question bundle, or None when they cannot be offered
    (too many options, or ids too long for a button value)."""
    question = bundle.questions[0]
    if len(question.options) > MAX_ACTIONS_ELEMENTS - _NON_OPTION_BUTTONS:
        return None
    buttons = []
    for index, option in enumerate(question.options):
        value = ButtonValue(
            pending_id=bundle.pending_id,
            question_id=question.question_id,
            option_id=option.option_id,
        )
        try:
            encoded = value.encode()
        except CodecError:
            return None
        buttons.append(button(option.label, ids.option_action_id(index), value=encoded))
    return buttons


def _action_elements(bundle: Bundle, pending: bool, url: str) -> list[Block]:
    open_button = button("Open in Kandev", ids.ACTION_OPEN, url=url)
    if not pending:
        return [open_button]
    bundle_value = ButtonValue(pending_id=bundle.pending_id).encode()
    elements: list[Block] = []
    option_buttons = _option_buttons(bundle) if len(bundle.questions) == 1 else None
    if option_buttons is not None:
        question = bundle.questions[0]
        other = ButtonValue(pending_id=bundle.pending_id, question_id=question.question_id)
        elements += option_buttons
        elements.append(button("Other answer…", ids.ACTION_OTHER, value=other.encode()))
    else:
        elements.append(
            button("Answer…", ids.ACTION_ANSWER_MODAL, value=bundle_value, style="primary")
        )
    elements.append(button("Reject…", ids.ACTION_REJECT, value=bundle_value, style="danger"))
    conversation = ButtonValue(pending_id=bundle.pending_id, conversation=True).encode()
    elements.append(button("Conversation", ids.ACTION_CONVERSATION, value=conversation))
    elements.append(open_button)
    return elements


def _fallback_text(bundle: Bundle, title: str, outcome: CardOutcome | None) -> str:
    parts = []
    for question in bundle.questions:
        heading = one_line(question.title)
        prompt = fit_plain(one_line(question.prompt), FALLBACK_PROMPT)[0]
        parts.append(f"{heading}: {prompt}" if heading and prompt else heading or prompt)
    asked = f"Agent question: {title}"
    if any(parts):
        asked += " — " + "; ".join(p for p in parts if p)
    if outcome is None:
        return fit_escaped(asked, MAX_MESSAGE_TEXT)[0]
    line = outcome_line(outcome, bundle)
    room = MAX_MESSAGE_TEXT - slack_len(line) - 3
    return f"{line} — {fit_escaped(asked, room)[0]}"


def _water_level(lengths: list[int], budget: int) -> int:
    """The largest cap such that capping every length at it fits ``budget`` altogether (the
    short ones keep their length, the long ones share what is left equally)."""
    remaining = budget
    ordered = sorted(lengths)
    for position, length in enumerate(ordered):
        share = remaining // (len(ordered) - position)
        if length > share:
            return share
        remaining -= length
    return max(ordered, default=budget)


def _within_total(fixed: list[Block], parts: list[Callable[[int], str]]) -> list[str]:
    """Render each variable part (context, questions, options) at its own limit, then, if the
    message would hold more text than Slack accepts altogether, again with the longest ones
    shortened to a common cap."""
    texts = [render(MAX_SECTION_TEXT) for render in parts]
    room = MAX_MESSAGE_BLOCKS_TEXT - blocks_text_length(fixed)
    lengths = [slack_len(t) for t in texts]
    if sum(lengths) <= room:
        return texts
    cap = _water_level(lengths, room)
    return [
        render(cap) if length > cap else text
        for render, text, length in zip(parts, texts, lengths, strict=True)
    ]


def render_card(
    bundle: Bundle,
    task: TaskInfo,
    state: CardState,
    outcome: CardOutcome | None,
    *,
    kandev_url: str,
    now: datetime,
    past: PastAnswer | None = None,
) -> dict[str, Any]:
    """The card message for ``chat.postMessage`` / ``chat.update``: ``{"text", "blocks"}``.

    ``past``: the last answer to the same questions, shown under them while pending.

    Pending cards carry the answer controls; terminal cards keep the questions for context,
    mark the chosen options, carry the outcome line and only an "Open in Kandev" link button.
    Everything is within Slack's limits whatever Kandev sends (each block's, and the text of all
    blocks together); shortened text says so and links to the task in Kandev.
    """
    url = task_url(kandev_url, bundle.task_id or task.task_id)
    note = shortened_note(url)
    final = shown_outcome(state, outcome, now)
    title = fit_plain(one_line(task.title) or UNTITLED_TASK, MAX_TITLE)[0]
    head = _head_blocks(bundle, task, final, url, title, now)
    room = (MAX_MESSAGE_BLOCKS - _FIXED_BLOCKS) // _BLOCKS_PER_QUESTION
    tail = _tail_blocks(bundle, final, past, url, room, now)
    questions = bundle.questions[:room]
    parts = _variable_parts(bundle, final, note, questions)
    texts = _within_total(head + tail, [render for _, render in parts])
    starts = {ids.question_block_id(i, q) for i, q in enumerate(questions)}

    blocks = list(head)
    for (block_id, _), text in zip(parts, texts, strict=True):
        if block_id in starts:
            blocks.append(divider())
        if text:
            blocks.append(section(text, block_id=block_id))
    blocks += tail
    return {"text": _fallback_text(bundle, title, final), "blocks": blocks}


def _head_blocks(
    bundle: Bundle, task: TaskInfo, final: CardOutcome | None, url: str, title: str, now: datetime
) -> list[Block]:
    """The title, the task's line, the meta line and (once final) the outcome."""
    head: list[Block] = [section(f"*{link(url, title)}*", block_id=ids.BLOCK_TITLE)]
    line = task_line(task)
    if line:
        head.append(context(line, block_id=ids.BLOCK_TASK))
    head.append(context(_meta_line(bundle, task, now), block_id=ids.BLOCK_META))
    if final is not None:
        line = f"{outcome_line(final, bundle)} · {slack_date(final.at)}"
        head.append(section(line, block_id=ids.BLOCK_OUTCOME))
    return head


def _tail_blocks(
    bundle: Bundle,
    final: CardOutcome | None,
    past: PastAnswer | None,
    url: str,
    room: int,
    now: datetime,
) -> list[Block]:
    """The notice of questions not shown, the past answer (while pending) and the buttons."""
    tail: list[Block] = []
    total = len(bundle.questions)
    if total > room:
        hidden = f"{total - room} more questions are not shown here — "
        hidden += link(url, "open them in Kandev")
        tail.append(context(hidden, block_id=ids.BLOCK_NOTICE))
    if past is not None and final is None:
        tail.append(context(past_line(past, now), block_id=ids.BLOCK_PAST))
    elements = _action_elements(bundle, final is None, url)
    tail.append(actions(elements, block_id=ids.BLOCK_ACTIONS))
    return tail


Render = Callable[[int], str]


def _variable_parts(
    bundle: Bundle, final: CardOutcome | None, note: str, questions: Sequence[Question]
) -> list[tuple[str, Render]]:
    """The variable parts, each rendered within a budget: (block_id, render(budget)); a
    divider goes before each question."""
    parts: list[tuple[str, Render]] = []
    shared = markdown_to_mrkdwn(bundle.context)
    if shared:
        parts.append((ids.BLOCK_CONTEXT, lambda b: shorten_mrkdwn(shared, b, note=note)[0]))
    total = len(bundle.questions)
    for index, question in enumerate(questions):
        answer = _answer_for(final, question)
        parts.append(
            (ids.question_block_id(index, question), _question(index, total, question, note))
        )
        parts.append((ids.options_block_id(index, question), _options(question, answer, note)))
    return parts


def _question(index: int, total: int, question: Question, note: str) -> Render:
    return lambda budget: question_text(index, total, question, note, budget=budget)


def _options(question: Question, answer: Answer | None, note: str) -> Render:
    return lambda budget: options_text(question, answer, note, budget=budget)
