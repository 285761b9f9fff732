"""The Conversation view: a modal with the task, the session's last messages before the
question, earlier answers to the same question, and the question with "Answer…". Pure.

What the modal shows is decided in two steps: :func:`entries` turns the session's messages
into what is shown (agent and person messages as rendered Markdown, tool calls one line each,
status lines skipped), and :func:`render_conversation` fits the newest of them within the
modal's limits (100 blocks, 3,000 characters a section, a budget for all the text together),
saying how many earlier ones are left out, with a link to Kandev.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, actions, button, context, divider, plain, section
from kandev_slack.cards.limits import MAX_SECTION_TEXT, MAX_VIEW_BLOCKS, MAX_VIEW_TITLE, slack_len
from kandev_slack.cards.mrkdwn import link, markdown_to_mrkdwn
from kandev_slack.cards.taskline import UNTITLED_TASK, task_line, task_url
from kandev_slack.cards.text import (
    escape_url,
    fit_escaped,
    fit_plain,
    one_line,
    shorten_mrkdwn,
    shortened_note,
)
from kandev_slack.core.domain import Card, PastAnswer
from kandev_slack.kandev.models import SessionMessage
from kandev_slack.kinds.question.cards.card import past_line
from kandev_slack.kinds.question.cards.fields import options_text, question_text

TITLE = "Conversation"
LOADING_TEXT = "Loading the conversation from Kandev…"
#: All the text of the messages shown, together (the modal stays readable and well within
#: what Slack accepts for a view).
MAX_MESSAGES_TEXT = 15_000
#: One message's share at most, so one long message does not push out all the others.
MAX_MESSAGE_TEXT = 2_000
MAX_DESCRIPTION = 1_200
MAX_TOOL_LINE = 200
MAX_QUESTIONS_SHOWN = 4
MAX_PAST_SHOWN = 5
#: Blocks the messages may use: 100 minus the task, notes, dividers, earlier answers,
#: questions (two sections each) and the buttons.
_FIXED_BLOCKS = 8 + (1 + MAX_PAST_SHOWN) + 2 * MAX_QUESTIONS_SHOWN + 2
MESSAGE_BLOCKS = MAX_VIEW_BLOCKS - _FIXED_BLOCKS
_SKIPPED_TYPES = frozenset({"status", "script_execution"})
_CLARIFICATION = "clarification_request"

Problem = Literal["unreachable", "auth", "gone", "failed"]


@dataclass(frozen=True)
class Entry:
    """One thing shown: a message (``text`` is safe mrkdwn with its heading) or a one-line
    note (a tool call, an earlier question)."""

    kind: Literal["message", "line"]
    text: str


@dataclass(frozen=True)
class Conversation:
    """What the use-case found for one card: the view model the modal is rendered from."""

    card: Card
    description: str = ""  # the task's description (Markdown)
    messages: tuple[SessionMessage, ...] = ()  # before the question, oldest first
    complete: bool = True  # nothing older exists in the session
    earlier: tuple[tuple[PastAnswer, str | None], ...] = field(default=())  # with permalinks
    problem: Problem | None = None
    kandev_url: str = ""  # where Kandev can be reached, for an "unreachable" message


# ---- messages → entries ------------------------------------------------------------------


def _obj_at(value: dict[str, Any], key: str) -> dict[str, Any]:
    found = value.get(key)
    return found if isinstance(found, dict) else {}


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def _tool_line(message: SessionMessage) -> str:
    """``🔧 Ran `npm test` — failed (exit 1)``, ``🔧 Read db/schema.sql``: every tool line a
    verb first, the command as code, a failure said the same way for every tool."""
    meta = message.metadata or {}
    normalized = _obj_at(meta, "normalized")
    shell = _obj_at(normalized, "shell_exec")
    failed = str(meta.get("status") or "") in ("error", "failed")
    command = str(shell.get("command") or "") if shell else ""
    if command:
        output = _obj_at(shell, "output")
        code = output.get("exit_code") if output else None
        shown = fit_escaped(one_line(command).replace("`", "ˋ"), MAX_TOOL_LINE)[0]
        what = f"Ran `{shown}`"
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            what += f" — failed (exit {code})"
        elif failed:
            what += " — failed"
        return f"🔧 {what}"
    title = one_line(str(meta.get("title") or "")) or one_line(message.content)
    title = fit_escaped(title or message.type.removeprefix("tool_") or "tool", MAX_TOOL_LINE)[0]
    return f"🔧 {_capitalized(title)}" + (" — failed" if failed else "")


def _same_text(a: str, b: str) -> bool:
    return one_line(a).casefold() == one_line(b).casefold() != ""


def without_first_prompt(
    messages: tuple[SessionMessage, ...], description: str
) -> tuple[SessionMessage, ...]:
    """The messages without the first person message when it is the task's description
    (Kandev stores the task's first prompt as one): the view shows each thing once."""
    for position, message in enumerate(messages):
        if message.type == "message" and message.author_type != "agent":
            if _same_text(message.content, description):
                return messages[:position] + messages[position + 1 :]
            return messages
    return messages


def entries(messages: tuple[SessionMessage, ...], agent_name: str = "") -> list[Entry]:
    """What is shown for each message, oldest first; status lines and the like are skipped."""
    agent = "🤖 *" + (fit_escaped(one_line(agent_name), 80)[0] or "Agent") + "*"
    found: list[Entry] = []
    for message in messages:
        if message.type in _SKIPPED_TYPES:
            continue
        if message.type.startswith("tool_"):
            found.append(Entry("line", _tool_line(message)))
        elif message.type == _CLARIFICATION:
            asked = fit_escaped(one_line(message.content), MAX_TOOL_LINE)[0]
            found.append(Entry("line", f"❓ Asked: {asked}" if asked else "❓ Asked a question"))
        elif message.type == "message":
            body = markdown_to_mrkdwn(message.content)
            if not body:
                continue
            heading = agent if message.author_type == "agent" else "👤 *Person*"
            found.append(Entry("message", f"{heading}\n{body}"))
    return found


# ---- fitting ---------------------------------------------------------------------------


def _message_blocks(shown: list[Entry], note: str) -> list[Block]:
    """Sections for messages; consecutive one-liners share a context block."""
    blocks: list[Block] = []
    lines: list[str] = []

    def flush() -> None:
        if lines:
            text = shorten_mrkdwn("\n".join(lines), MAX_SECTION_TEXT, note="…")[0]
            blocks.append(context(text))
            lines.clear()

    for entry in shown:
        if entry.kind == "line":
            if slack_len("\n".join([*lines, entry.text])) > MAX_SECTION_TEXT:
                flush()
            lines.append(entry.text)
            continue
        flush()
        blocks.append(section(shorten_mrkdwn(entry.text, MAX_MESSAGE_TEXT, note=note)[0]))
    flush()
    return blocks


def fit_entries(found: list[Entry], note: str) -> tuple[list[Block], int]:
    """The blocks of the newest entries that fit (oldest first) and how many older ones are
    left out: at most ``MESSAGE_BLOCKS`` blocks and ``MAX_MESSAGES_TEXT`` characters."""
    blocks, text, taken, run = 0, 0, 0, 0
    newer: Entry | None = None
    for entry in reversed(found):
        if entry.kind == "line":
            cost = slack_len(entry.text) + 1
            joins = newer is not None and newer.kind == "line" and run + cost <= MAX_SECTION_TEXT
            more_blocks, run = (0, run + cost) if joins else (1, cost)
        else:
            cost = slack_len(shorten_mrkdwn(entry.text, MAX_MESSAGE_TEXT, note=note)[0])
            more_blocks = 1
        if blocks + more_blocks > MESSAGE_BLOCKS or text + cost > MAX_MESSAGES_TEXT:
            break
        blocks, text, taken, newer = blocks + more_blocks, text + cost, taken + 1, entry
    rendered = _message_blocks(found[len(found) - taken :], note)
    while len(rendered) > MESSAGE_BLOCKS:  # runs of one-liners split differently: drop more
        taken -= 1
        rendered = _message_blocks(found[len(found) - taken :], note)
    return rendered, len(found) - taken


# ---- the modal -------------------------------------------------------------------------


def _modal(blocks: list[Block], metadata: str) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": ids.CALLBACK_CONVERSATION,
        "title": plain(TITLE, MAX_VIEW_TITLE),
        "close": plain("Close", MAX_VIEW_TITLE),
        "blocks": blocks[:MAX_VIEW_BLOCKS],
        "private_metadata": metadata,
    }


def _head(card: Card, url: str) -> list[Block]:
    title = fit_plain(one_line(card.task.title) or UNTITLED_TASK, 300)[0]
    blocks = [section(f"*{link(url, title)}*")]
    meta = []
    line = task_line(card.task)
    if line:
        meta.append(line)
    workspace = one_line(card.task.workspace_name)
    if workspace:
        meta.append("Workspace *" + fit_escaped(workspace, 200)[0] + "*")
    if meta:
        blocks.append(context(" · ".join(meta)))
    return blocks


def loading_view(card: Card, *, kandev_url: str, metadata: str) -> dict[str, Any]:
    """What the modal shows at once, until Kandev answered."""
    url = task_url(kandev_url, card.task_id)
    return _modal([*_head(card, url), context(f"⏳ {LOADING_TEXT}")], metadata)


def _problem_text(conversation: Conversation, url: str) -> str:
    where = f"<{escape_url(url)}|open the task in Kandev>"
    match conversation.problem:
        case "unreachable":
            return (
                "⚠️ Kandev cannot be reached right now, so the conversation cannot be shown. "
                f"Try again in a moment, or {where}."
            )
        case "auth":
            return (
                "⚠️ Kandev refused the bot's access token, so the conversation cannot be shown. "
                "Tell whoever runs the bot."
            )
        case "gone":
            return (
                "⚠️ Kandev no longer has this conversation: the task or its session was "
                f"deleted. You can still {where}."
            )
    return f"⚠️ Kandev could not give the conversation. Try again, or {where}."


def _questions(card: Card, url: str, note: str) -> list[Block]:
    bundle = card.bundle
    total = len(bundle.questions)
    blocks: list[Block] = []
    for index, question in enumerate(bundle.questions[:MAX_QUESTIONS_SHOWN]):
        blocks.append(section(question_text(index, total, question, note)))
        options = options_text(question, None, note)
        if options:
            blocks.append(section(options))
    if total > MAX_QUESTIONS_SHOWN:
        more = total - MAX_QUESTIONS_SHOWN
        blocks.append(context(f"{more} more questions: {link(url, 'see them in Kandev')}"))
    return blocks


def _earlier(conversation: Conversation, now: datetime) -> list[Block]:
    if not conversation.earlier:
        return []
    lines = []
    for past, permalink in conversation.earlier[:MAX_PAST_SHOWN]:
        line = past_line(past, mention=True).removeprefix("↩ Last answered ").strip()
        line = "• Answered " + line
        if permalink:
            line += f" · <{escape_url(permalink)}|View card>"
        lines.append(line)
    text = "*Answered before* (the same question in this channel)\n" + "\n".join(lines)
    return [section(shorten_mrkdwn(text, MAX_SECTION_TEXT, note="…")[0])]


def render_conversation(
    conversation: Conversation, *, kandev_url: str, now: datetime, metadata: str
) -> dict[str, Any]:
    """The filled modal (or, when Kandev could not say, a plain explanation)."""
    card = conversation.card
    url = task_url(kandev_url, card.task_id)
    note = shortened_note(url)
    blocks = _head(card, url)
    if conversation.problem is not None:
        blocks.append(section(_problem_text(conversation, url)))
        return _modal(blocks, metadata)

    description = markdown_to_mrkdwn(conversation.description)
    if description:
        blocks.append(section(shorten_mrkdwn(description, MAX_DESCRIPTION, note=note)[0]))
    blocks.append(divider())

    messages = without_first_prompt(conversation.messages, conversation.description)
    shown, left_out = fit_entries(entries(messages, card.task.agent_name), note)
    fetched_all = conversation.complete
    if left_out or not fetched_all:
        count = f"{left_out} earlier message{'s' if left_out != 1 else ''}"
        count = count if fetched_all else (f"{count} and more" if left_out else "Earlier messages")
        blocks.append(
            context(
                f"{count} not shown here — {link(url, 'read the whole conversation in Kandev')}"
            )
        )
    if shown:
        blocks += shown
    else:
        blocks.append(context("The agent said nothing else before asking."))
    blocks.append(divider())
    blocks += _earlier(conversation, now)
    blocks += _questions(card, url, note)
    buttons = [button("Open in Kandev", ids.ACTION_OPEN, url=url)]
    if not card.state.terminal:
        value = ids.ButtonValue(pending_id=card.pending_id).encode()
        answer = button("Answer…", ids.ACTION_ANSWER_MODAL, value=value, style="primary")
        buttons.insert(0, answer)
    blocks.append(actions(buttons, block_id=ids.BLOCK_ACTIONS))
    return _modal(blocks, metadata)
