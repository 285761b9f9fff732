"""What an approval would allow, shown so that nothing of it is hidden unseen (pure).

A long command is never cut at its end: what does not fit shows as its start and its end with
"N characters not shown" between them (``fit_middle``), under a one-line summary (what kind of
action, the program, the working directory, the length), and the whole text is one click away
(the full view, :func:`whole_view`). Lengths are measured as Slack counts the text it is sent:
after mrkdwn escaping (``&`` is ``&amp;``), in UTF-16 code units — so the budget of a command is
its section's own 3,000, not a smaller share of it. "N characters" counts the command's own
characters (code points) that are not shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kandev_slack.cards.limits import MAX_SECTION_TEXT, slack_len
from kandev_slack.cards.text import (
    ELLIPSIS,
    defuse_broadcasts,
    defuse_plain,
    escape_char,
    fit_escaped,
    fit_plain,
    grapheme_boundary,
    one_line,
    sanitize,
)
from kandev_slack.core.approval import KANDEV_CUT_BYTES, ToolAction, ToolOption

_ZWSP = "\u200b"
#: Room kept in a section for the "N characters not shown" line and the code fences.
_NOTE_ROOM = 80
_FENCES = len("```\n\n```") * 2

# ---- the middle cut ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Middle:
    """A text shown whole (``hidden == 0``: ``head`` is all of it) or as ``head`` … ``tail``:
    ``head`` and ``tail`` are rendered (escaped), ``head_len`` / ``tail_len`` how many of the
    raw text's characters they show, ``hidden`` how many are not shown between them."""

    head: str
    tail: str
    hidden: int
    head_len: int
    tail_len: int

    @property
    def whole(self) -> bool:
        return self.hidden == 0


def render_code(text: str) -> str:
    """Raw text → what goes inside a mrkdwn code block: sanitised, broadcasts defused,
    ``&<>`` escaped, and no three backticks in a row (a zero-width space after each backtick
    that follows a backtick), so the block cannot be closed from inside."""
    out: list[str] = []
    previous = ""
    for ch in defuse_broadcasts(sanitize(text)):
        if ch == "`" and previous == "`":
            out.append(_ZWSP)
        out.append(escape_char(ch))
        previous = ch
    return "".join(out)


def render_inline(text: str) -> str:
    """Raw text → mrkdwn inside one inline code span (one line, no backtick)."""
    return "".join(escape_char(c) for c in defuse_broadcasts(one_line(text).replace("`", "ˋ")))


def render_plain(text: str) -> str:
    """Raw text → plain_text (one line, defused)."""
    return defuse_plain(one_line(text))


def _prefix_len(text: str, budget: int) -> int:
    """How many leading characters of ``text`` cost at most ``budget`` (an estimate of the
    rendered cost: escaping and UTF-16), at a grapheme boundary."""
    total = 0
    for index, ch in enumerate(text):
        total += slack_len(escape_char(ch)) + (1 if ch == "`" else 0)
        if total > budget:
            return grapheme_boundary(text, index)
    return len(text)


def _suffix_start(text: str, budget: int) -> int:
    """Where the trailing part of ``text`` that costs at most ``budget`` starts."""
    total = 0
    for index in range(len(text) - 1, -1, -1):
        ch = text[index]
        total += slack_len(escape_char(ch)) + (1 if ch == "`" else 0)
        if total > budget:
            start = index + 1
            moved = grapheme_boundary(text, start)
            # A boundary at or after ``start`` (never more than asked for).
            while moved < start and start < len(text):
                start += 1
                moved = grapheme_boundary(text, start)
            return start
    return 0


def fit_middle(text: str, budget: int, render: Callable[[str], str] = render_code) -> Middle:
    """``text`` rendered whole when it fits in ``budget`` (measured after ``render``), else
    its start and its end, each about half of ``budget``, and how many characters lie
    between them (never a negative count, never an overlap)."""
    whole = render(text)
    if slack_len(whole) <= budget:
        return Middle(whole, "", 0, len(text), 0)
    share = max(0, budget // 2)
    while True:
        head_len = _prefix_len(text, share)
        tail_start = max(head_len, _suffix_start(text, share))
        head, tail = render(text[:head_len]), render(text[tail_start:])
        if slack_len(head) + slack_len(tail) <= budget or share == 0:
            tail_len = len(text) - tail_start
            return Middle(head, tail, len(text) - head_len - tail_len, head_len, tail_len)
        share = share * 9 // 10


def not_shown(hidden: int) -> str:
    """``1,234 characters not shown``."""
    return f"{hidden:,} character{'' if hidden == 1 else 's'} not shown"


def code_block_text(text: str, budget: int = MAX_SECTION_TEXT) -> tuple[str, Middle]:
    """A command as safe mrkdwn within ``budget``: one code block, or the start and the end
    in two code blocks with "… N characters not shown …" between them."""
    middle = fit_middle(text, max(0, budget - _NOTE_ROOM - _FENCES))
    if middle.whole:
        return f"```\n{middle.head or '(empty)'}\n```", middle
    note = f"_{ELLIPSIS} {not_shown(middle.hidden)} {ELLIPSIS}_"
    head = f"```\n{middle.head}\n```\n" if middle.head else ""
    tail = f"\n```\n{middle.tail}\n```" if middle.tail else ""
    return f"{head}{note}{tail}", middle


def inline_middle(text: str, budget: int) -> tuple[str, Middle]:
    """Text in inline code within ``budget``: ```start`` … N characters not shown … ``end```."""
    flat = one_line(text)
    middle = fit_middle(flat, max(0, budget - _NOTE_ROOM), render_inline)
    if middle.whole:
        return (f"`{middle.head}`" if middle.head else "`(empty)`"), middle
    head = f"`{middle.head}`" if middle.head else ""
    tail = f"`{middle.tail}`" if middle.tail else ""
    return f"{head} _{ELLIPSIS} {not_shown(middle.hidden)} {ELLIPSIS}_ {tail}".strip(), middle


def plain_middle(text: str, budget: int) -> str:
    """Plain text within ``budget``: ``start … [N characters not shown] … end``."""
    flat = one_line(text)
    middle = fit_middle(flat, max(0, budget - 40), render_plain)
    if middle.whole:
        return middle.head
    return f"{middle.head} {ELLIPSIS} [{not_shown(middle.hidden)}] {ELLIPSIS} {middle.tail}"


# ---- the summary line ----------------------------------------------------------------------------

_CHAIN = re.compile(r"&&|\|\||;|\||\n")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def program_of(command: str) -> str:
    """The program a command starts with (its first word after any ``NAME=value``)."""
    for word in command.split():
        if not _ASSIGNMENT.match(word):
            return word
    return ""


def chained(command: str) -> int:
    """How many commands a command line holds (joined by ``&&``, ``||``, ``;``, ``|`` or
    lines; an approximation that ignores quoting)."""
    return sum(1 for part in _CHAIN.split(command) if part.strip())


#: A working directory's room in the summary line (a longer one: its start and its end there,
#: whole in the full view).
MAX_SUMMARY_CWD = 300


def cwd_cut(action: ToolAction) -> bool:
    """Whether the summary line shows only the start and the end of the working directory."""
    return (
        action.type == "command"
        and bool(action.command)
        and bool(action.cwd)
        and (not inline_middle(action.cwd, MAX_SUMMARY_CWD)[1].whole)
    )


def summary_line(action: ToolAction) -> str:
    """One line first: what kind of action, the program (and how many more commands the
    line chains), the working directory, and how long the whole text is (safe mrkdwn)."""
    a = action
    if a.type == "command" and a.command:
        program = program_of(a.command)
        parts = [f"Command {inline_middle(program, 120)[0] if program else '`?`'}"]
        more = chained(a.command) - 1
        if more > 0:
            parts[0] += f" and {more} more command{'s' if more > 1 else ''} chained"
        if a.cwd:
            parts.append(f"in {inline_middle(a.cwd, MAX_SUMMARY_CWD)[0]}")
        parts.append(_length(a, a.command))
        return " · ".join(parts)
    if a.type in ("file_write", "file_read") and a.path:
        verb = "Write" if a.type == "file_write" else "Read"
        return f"{verb} a file · {_length(a, a.path)}"
    if a.type == "network" and a.destination:
        return f"Reach the network · {_length(a, a.destination)}"
    return ""


def _length(action: ToolAction, text: str) -> str:
    """``1,990 characters``, or, when Kandev cut it, how much of it Kandev passed on."""
    if action.cut_by_kandev:
        return f"more than the {len(text):,} characters Kandev passed on"
    return f"{len(text):,} characters"


def target_of(action: ToolAction) -> str:
    """The text the approval allows: the command, the path or the destination ("" when
    Kandev named none)."""
    a = action
    if a.type == "command":
        return a.command
    if a.type in ("file_write", "file_read"):
        return a.path
    if a.type == "network":
        return a.destination
    return a.command or a.path or a.destination


def whole_label(action: ToolAction) -> str:
    """The full view's button: "Show whole command" (or path, or address)."""
    return {
        "command": "Show whole command",
        "file_write": "Show whole path",
        "file_read": "Show whole path",
        "network": "Show whole address",
    }.get(action.type, "Show it whole")


# ---- the "always" confirmation --------------------------------------------------------------

MAX_CONFIRM_TEXT = 300
_CONFIRM_LABEL = 40


def confirm_text(option: ToolOption, action: ToolAction, limit: int = MAX_CONFIRM_TEXT) -> str:
    """The confirm of an "always" option: names the command (its start and its end) and says
    what Kandev reports about what will be allowed from then on — only the option's name and
    kind — and that it says nothing more (plain text within ``limit``)."""
    label = fit_plain(option.label, _CONFIRM_LABEL)[0]
    verb = "Always allow" if option.allows else "Always reject"
    what = target_of(action) or action.description or "this tool call"
    does = "runs" if option.allows else "refuses"
    named = label.casefold() not in (verb.casefold(), "allow always", "reject always")
    head = f"{verb} (“{label}”): " if named else f"{verb}: "
    tails = (
        f"\nKandev reports only this option's name and kind ({option.kind or 'none'}), nothing "
        f"about what else it covers: the agent decides what is “like this” and {does} it "
        "without asking.",
        f"\nKandev says nothing more ({option.kind or 'none'}): the agent decides what is "
        f"“like this” and {does} it without asking.",
        "\nKandev says nothing more about what it covers.",
    )
    for tail in tails:
        room = limit - slack_len(head) - slack_len(tail)
        if room >= 100:
            break
    shown = plain_middle(what, max(0, room))
    return fit_plain(head + shown + tail, limit)[0]


def confirm_title(option: ToolOption) -> str:
    return "Always allow this?" if option.allows else "Always reject this?"


def confirm_dialog(option: ToolOption, action: ToolAction, limit: int) -> dict[str, Any]:
    """Slack's confirmation dialog of an "always" option."""
    text = confirm_text(option, action, limit)
    return {
        "title": {"type": "plain_text", "text": confirm_title(option), "emoji": True},
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "confirm": {
            "type": "plain_text",
            "text": "Always allow" if option.allows else "Always reject",
            "emoji": True,
        },
        "deny": {"type": "plain_text", "text": "Cancel", "emoji": True},
    }


def description_line(action: ToolAction, limit: int = 300) -> str:
    """The agent's own description of it (safe mrkdwn, italic), when it has one."""
    text = one_line(action.description)
    return f"_{fit_escaped(text, limit)[0]}_" if text else ""


# ---- what the action names, on a card --------------------------------------------------------

_WHAT = {
    "command": "run a command",
    "file_write": "write a file",
    "file_read": "read a file",
    "network": "reach the network",
}


def wants(action: ToolAction) -> str:
    """``run a command`` / ``write a file`` / … (what the card's meta line says)."""
    return _WHAT.get(action.type, "use a tool")


def target_text(action: ToolAction, budget: int = MAX_SECTION_TEXT) -> tuple[str, int]:
    """The command (a code block), the path or the destination, within ``budget`` as Slack
    counts it: whole, or its start and its end with "N characters not shown" between them.
    Returns (safe mrkdwn, how many characters are not shown); ("", 0) when there is none."""
    target = target_of(action)
    if not target:
        return "", 0
    if action.type == "command" or "\n" in target:
        text, middle = code_block_text(target, budget)
    else:
        text, middle = inline_middle(target, budget)
    return text, middle.hidden


def cut_notice(action: ToolAction, waiting: bool = True) -> str:
    """What the card says when Kandev cut what it passed on: its end is unknown here, so
    it can be allowed only in Kandev (safe mrkdwn)."""
    what = {"command": "command"}.get(action.type, "text")
    text = (
        f"⚠️ *Kandev passed on only the first {KANDEV_CUT_BYTES:,} bytes of this {what}*: "
        "what follows, its end included, is not known in Slack."
    )
    if waiting:
        text += " It can be allowed only in Kandev, where it is shown; rejecting works here."
    return text
