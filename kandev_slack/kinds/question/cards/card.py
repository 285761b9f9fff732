"""The Slack card of one bundle: pure rendering of (bundle, task, state, outcome) → message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, actions, button, context, divider, section
from kandev_slack.cards.ids import ButtonValue, CodecError
from kandev_slack.cards.limits import (
    MAX_ACTIONS_ELEMENTS,
    MAX_MESSAGE_BLOCKS,
    MAX_MESSAGE_BLOCKS_TEXT,
    MAX_MESSAGE_TEXT,
    MAX_SECTION_TEXT,
    blocks_text_length,
    slack_len,
)
from kandev_slack.cards.more import card_head, secondary_actions
from kandev_slack.cards.mrkdwn import link, markdown_to_mrkdwn
from kandev_slack.cards.taskline import (
    MAX_META_TASK_LINE,
    UNTITLED_TASK,
    task_line,
    task_url,
    urgency_prefix,
)
from kandev_slack.cards.text import (
    ELLIPSIS,
    fit_escaped,
    fit_plain,
    one_line,
    shorten_mrkdwn,
    shortened_note,
)
from kandev_slack.cards.views.groups import group_block
from kandev_slack.cards.wording import (
    asked_at,
    choices_summary,
    outcome_line,
    slack_date,
    user_mention,
)
from kandev_slack.core.claims import Claim
from kandev_slack.core.clarification import Answer, Bundle, Question
from kandev_slack.core.domain import CardOutcome, CardState, PastAnswer, TaskInfo, shown_outcome
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.kinds.question.cards.fields import (
    MAX_OPTION_LINE,
    card_question_text,
    chosen_text,
    context_text,
    options_text,
)

MAX_TITLE = 300
MAX_WORKSPACE = 200
FALLBACK_PROMPT = 200
#: title, meta or outcome, descriptions, context, past answer, answer row, notice, quiet row
_FIXED_BLOCKS = 8
_BLOCKS_PER_QUESTION = 3  # divider, question, options
_NON_OPTION_BUTTONS = 1  # Other answer… (the quiet row has its own actions block)


def _answer_for(outcome: CardOutcome | None, question: Question) -> Answer | None:
    if outcome is None or outcome.state is not CardState.ANSWERED:
        return None
    return next((a for a in outcome.answers if a.question_id == question.question_id), None)


def _meta_line(bundle: Bundle, task: TaskInfo) -> str:
    """The one grey line of who/where/when: agent, priority, labels, workspace, when asked (a
    Slack date token, true however old the card gets) and how many questions."""
    parts = []
    line = task_line(task, limit=MAX_META_TASK_LINE)
    if line:
        parts.append(line)
    workspace = one_line(task.workspace_name)
    if workspace:
        parts.append("Workspace *" + fit_escaped(workspace, MAX_WORKSPACE)[0] + "*")
    parts.append(asked_at(bundle.created_at))
    count = len(bundle.questions)
    if count > 1:
        parts.append(f"{count} questions, answer all together")
    return " · ".join(parts)


MAX_PAST_SUMMARY = 500


def past_line(past: PastAnswer, *, mention: bool = False) -> str:
    """``↩ Last answered <date> in Slack: PostgreSQL`` (safe mrkdwn). Nobody is mentioned on a
    card: it is a new message, and a mention would notify the earlier answerer each time the
    question comes back; ``mention``: name them (``by <@U…>``) where that notifies no one (a
    modal)."""
    who = user_mention(past.by_user) if mention and past.via == "slack" else None
    where = f"by {who}" if who else "in Slack" if past.via == "slack" else "in Kandev"
    line = f"↩ Last answered {slack_date(past.at)} {where}"
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


def _primary_row(bundle: Bundle) -> Block:
    """The answer buttons: one per option and "Other answer…" (one question), else "Answer…"."""
    option_buttons = _option_buttons(bundle) if len(bundle.questions) == 1 else None
    if option_buttons is not None:
        question = bundle.questions[0]
        other = ButtonValue(pending_id=bundle.pending_id, question_id=question.question_id)
        elements = [
            *option_buttons,
            button("Other answer…", ids.ACTION_OTHER, value=other.encode()),
        ]
    else:
        value = ButtonValue(pending_id=bundle.pending_id).encode()
        elements = [button("Answer…", ids.ACTION_ANSWER_MODAL, value=value, style="primary")]
    return actions(elements, block_id=ids.BLOCK_ACTIONS)


def _has_option_buttons(bundle: Bundle) -> bool:
    return len(bundle.questions) == 1 and _option_buttons(bundle) is not None


def _fallback_text(bundle: Bundle, task: TaskInfo, title: str, outcome: CardOutcome | None) -> str:
    """The notification / screen-reader text: the priority of an urgent task first, then the
    question and the task (once resolved: the outcome first). Nobody is mentioned."""
    parts = []
    for question in bundle.questions:
        prompt = fit_plain(one_line(question.prompt) or one_line(question.title), FALLBACK_PROMPT)
        if prompt[0]:
            parts.append(prompt[0])
    asked = "; ".join(parts) if parts else "Agent question"
    asked += f" — {title}"
    if outcome is None:
        return fit_escaped(urgency_prefix(task) + asked, MAX_MESSAGE_TEXT)[0]
    line = outcome_line(outcome, bundle, mention=False)
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
    claim: Claim | None = None,
    also_asked: Sequence[AlsoAsked] = (),
    reader: str | None = None,
) -> dict[str, Any]:
    """The card message for ``chat.postMessage`` / ``chat.update``: ``{"text", "blocks"}``.

    Question first. A waiting card reads: the title (linked to Kandev), one grey line of
    who/where/when, each question's prompt in bold, the answer buttons, the context cut to
    about three lines (the rest is one click away: Conversation), the last answer to the same
    question, the other agents waiting on the same one question (``also_asked``: "Also asked
    by 2 other agents", linked to their tasks) and one row of quiet secondary buttons
    (Reject…, Conversation, Open in Kandev).

    A resolved card is short and outcome-first: the title, the outcome line in bold, and the
    questions with the chosen answers marked; the context and the other options go.
    ``reader``: the one person who sees the card (a DM card's recipient): the holder of a
    claim is offered Release, anyone else Take over, not both.
    Everything is within Slack's limits whatever Kandev sends (each block's, and the text of all
    blocks together); shortened text says so and links to the task in Kandev.
    """
    url = task_url(kandev_url, bundle.task_id or task.task_id)
    note = shortened_note(url)
    final = shown_outcome(state, outcome, now)
    title = fit_plain(one_line(task.title) or UNTITLED_TASK, MAX_TITLE)[0]
    done = outcome_line(final, bundle) if final is not None else None
    at = final.at if final is not None else None
    meta = _meta_line(bundle, task)
    urgency = urgency_prefix(task)
    head = card_head(url, title, meta=meta, outcome=done, at=at, claim=claim, urgency=urgency)
    room = (MAX_MESSAGE_BLOCKS - _FIXED_BLOCKS) // _BLOCKS_PER_QUESTION
    questions = bundle.questions[:room]
    buttons = final is None and _has_option_buttons(bundle)
    parts = _variable_parts(bundle, final, note, questions, buttons=buttons, url=url)
    group = also_asked if final is None and len(bundle.questions) == 1 else ()
    tail = _tail_blocks(bundle, final, past, url, room, claim, group, kandev_url, reader)
    texts = _within_total(head + tail, [render for _, render in parts])
    rendered = {block_id: text for (block_id, _), text in zip(parts, texts, strict=True)}
    starts = {ids.question_block_id(i, q) for i, q in enumerate(questions)}

    blocks = list(head)
    for block_id, text in rendered.items():
        if block_id in (ids.BLOCK_CONTEXT, BLOCK_DESCRIPTIONS) or not text:
            continue
        if block_id in starts and len(bundle.questions) > 1:
            blocks.append(divider())
        blocks.append(section(text, block_id=block_id))
    if final is None:
        blocks.append(_primary_row(bundle))
        if rendered.get(BLOCK_DESCRIPTIONS):
            blocks.append(context(rendered[BLOCK_DESCRIPTIONS], block_id=BLOCK_DESCRIPTIONS))
        if rendered.get(ids.BLOCK_CONTEXT):
            blocks.append(section(rendered[ids.BLOCK_CONTEXT], block_id=ids.BLOCK_CONTEXT))
    blocks += tail
    return {"text": _fallback_text(bundle, task, title, final), "blocks": blocks}


#: The block of a one-question card's option descriptions (under its buttons).
BLOCK_DESCRIPTIONS = "kq_descriptions"


def _tail_blocks(
    bundle: Bundle,
    final: CardOutcome | None,
    past: PastAnswer | None,
    url: str,
    room: int,
    claim: Claim | None,
    group: Sequence[AlsoAsked] = (),
    kandev_url: str = "",
    reader: str | None = None,
) -> list[Block]:
    """The notice of questions not shown, the past answer and the group (while pending) and
    the quiet row."""
    tail: list[Block] = []
    total = len(bundle.questions)
    if total > room:
        hidden = f"{total - room} more questions are not shown here — "
        hidden += link(url, "open them in Kandev")
        tail.append(context(hidden, block_id=ids.BLOCK_NOTICE))
    if past is not None and final is None:
        tail.append(context(past_line(past), block_id=ids.BLOCK_PAST))
    grouped = group_block(group, kandev_url=kandev_url) if final is None else None
    if grouped is not None:
        tail.append(grouped)
    pending = final is None
    tail.append(
        secondary_actions(
            url,
            pending_id=bundle.pending_id,
            reject=pending,
            conversation=pending,
            claimable=pending,
            claim=claim,
            reader=reader,
        )
    )
    return tail


Render = Callable[[int], str]


def _variable_parts(
    bundle: Bundle,
    final: CardOutcome | None,
    note: str,
    questions: Sequence[Question],
    *,
    buttons: bool,
    url: str,
) -> list[tuple[str, Render]]:
    """The variable parts, each rendered within a budget: (block_id, render(budget))."""
    parts: list[tuple[str, Render]] = []
    total = len(bundle.questions)
    for index, question in enumerate(questions):
        qid = ids.question_block_id(index, question)
        if final is not None:
            answer = _answer_for(final, question)
            parts.append((qid, _resolved(index, total, question, answer, note)))
            continue
        parts.append((qid, _prompt(index, total, question, note)))
        if not buttons:
            parts.append((ids.options_block_id(index, question), _options(question, note)))
        elif described := [o for o in question.options if one_line(o.description)]:
            only = question.model_copy(update={"options": described})
            parts.append((BLOCK_DESCRIPTIONS, _options(only, note)))
    shared = markdown_to_mrkdwn(bundle.context)
    if shared and final is None:
        parts.append((ids.BLOCK_CONTEXT, lambda b: context_text(shared, url, b)))
    return parts


def _prompt(index: int, total: int, question: Question, note: str) -> Render:
    return lambda b: card_question_text(index, total, question, note, bold=True, budget=b)


def _resolved(
    index: int, total: int, question: Question, answer: Answer | None, note: str
) -> Render:
    def render(budget: int) -> str:
        chosen = chosen_text(question, answer)
        room = budget - slack_len(chosen) - 1
        text = card_question_text(index, total, question, note, bold=False, budget=max(room, 200))
        joined = f"{text}\n{chosen}" if chosen else text
        return shorten_mrkdwn(joined, budget, note=ELLIPSIS)[0]

    return render


def _options(question: Question, note: str) -> Render:
    def render(budget: int) -> str:
        count = max(1, len(question.options))
        room = min(budget, MAX_OPTION_LINE * count + slack_len(note) + 1)
        return options_text(question, None, note, budget=room)

    return render
