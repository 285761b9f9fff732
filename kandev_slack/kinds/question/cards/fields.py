"""A question as a card and its forms show it (pure): the ``1/3 · Database`` heading, the
prompt cut to what a phone's first screen holds, the options with their descriptions, the
chosen answer, and the bundle's context cut to about three lines."""

from __future__ import annotations

from collections.abc import Sequence

from kandev_slack.cards.limits import MAX_SECTION_TEXT, slack_len
from kandev_slack.cards.mrkdwn import link, markdown_to_mrkdwn
from kandev_slack.cards.text import ELLIPSIS, fit_escaped, fit_plain, one_line, shorten_mrkdwn
from kandev_slack.cards.wording import quoted_free_text
from kandev_slack.core.clarification import Answer, Question

MAX_QUESTION_TITLE = 150
MAX_FREE_TEXT_SHOWN = 1000


def question_heading(index: int, total: int, question: Question) -> str:
    """``1/3 · Database`` (plain text; ``Database`` alone for a one-question bundle)."""
    title = fit_plain(one_line(question.title), MAX_QUESTION_TITLE)[0]
    if total <= 1:
        return title or "Question"
    return f"{index + 1}/{total} · {title}" if title else f"Question {index + 1}/{total}"


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


#: The context a waiting card shows: about three lines; the rest is under Conversation.
CONTEXT_LINES = 3
MAX_CONTEXT_SHOWN = 360
#: A question's ``1/2 · Title`` heading on a card, at most this long (two lines of a phone)
MAX_HEADING_SHOWN = 80
#: A card's prompt, at most this many lines (a phone's first screen holds the question)
PROMPT_LINES = 6
#: ... and at most this many rows of a 400 px phone, which shows about PHONE_COLUMNS
#: characters a row: one long unbroken line (a URL, a path) wraps into many.
PROMPT_ROWS = 8
PHONE_COLUMNS = 40
#: A card's prompt in bold, at most this long (the full text is in the form and Kandev).
MAX_PROMPT_SHOWN = 300
#: Each option's line (label and description) on a card, at most this long.
MAX_OPTION_LINE = 160


def first_lines(text: str, count: int, limit: int, note: str, *, rows: int = 0) -> str:
    """Safe mrkdwn cut to its first ``count`` lines and ``limit`` characters (an open code
    block closed) — and, with ``rows``, to what a phone shows in that many rows — followed by
    ``note`` when anything was cut; unchanged when it fits."""
    lines = text.split("\n")
    if rows:
        limit = min(limit, _within_rows(lines, rows))
    if len(lines) <= count and slack_len(text) <= limit:
        return text
    head = "\n".join(lines[:count]).rstrip()
    # At least a line of the text itself, however long the note (a note longer than what
    # the rows hold once left nothing of the question).
    room = max(min(limit, PHONE_COLUMNS), limit - slack_len(note) - 5)
    head = shorten_mrkdwn(head, room, note="")[0].rstrip()
    if head.count("```") % 2 == 1:  # the cut fell inside a code block: close it
        head = head[:-3].rstrip() if head.endswith("```") else head + "\n```"
    separator = "\n" if head.endswith("```") else " " if head else ""
    return head + separator + note


def _within_rows(lines: Sequence[str], rows: int) -> int:
    """How many characters of ``lines`` (joined by newlines) a phone shows in ``rows`` rows
    of :data:`PHONE_COLUMNS`; every character when they all fit. Raw mrkdwn is counted (a
    link's target too), so it errs on the side of a shorter prompt."""
    used = shown = 0
    for line in lines:
        need = max(1, -(-slack_len(line) // PHONE_COLUMNS))
        if used + need > rows:
            return shown + max(0, rows - used) * PHONE_COLUMNS
        used += need
        shown += slack_len(line) + 1
    return shown


def context_text(shared: str, url: str, budget: int = MAX_SECTION_TEXT) -> str:
    """The bundle's context (safe mrkdwn) cut to about three lines, saying where the rest is."""
    note = f"{ELLIPSIS} _(more under Conversation or {link(url, 'in Kandev')})_"
    return first_lines(shared, CONTEXT_LINES, min(budget, MAX_CONTEXT_SHOWN), note)


def bold_line(line: str) -> str:
    """``line`` (safe mrkdwn) in bold, inline code included (Slack reads code first, so a
    ``*`` inside it is literal): its own bold marks outside code merge into the whole line's
    (a lone backtick opens no code); a quote stays a quote (its text bold). Left as it is
    only where bold cannot wrap it: a code block's fence."""
    quote = "> " if line.startswith("> ") else ""
    text = line.removeprefix(quote)
    if "```" in text:
        return line
    parts = text.split("`")
    if len(parts) % 2 == 0:  # a lone backtick: no code span on this line
        parts = ["`".join(parts)]
    parts[::2] = [p.replace("*", "") for p in parts[::2]]
    inner = "`".join(parts).strip()
    return f"{quote}*{inner}*" if inner else line


def card_question_text(
    index: int,
    total: int,
    question: Question,
    note: str,
    *,
    bold: bool,
    budget: int = MAX_SECTION_TEXT,
) -> str:
    """The question as a card shows it: ``1/2 · Database`` over the prompt, whose first line
    is bold while the card waits (:func:`bold_line`: code included);
    shortened to about :data:`MAX_PROMPT_SHOWN`, saying so (the full text is in the form,
    the Conversation and Kandev)."""
    heading = ""
    if total > 1:
        heading = fit_escaped(question_heading(index, total, question), MAX_HEADING_SHOWN)[0]
    prompt = markdown_to_mrkdwn(question.prompt)
    if not prompt:
        prompt = fit_escaped(one_line(question.title) or "(no question text)", MAX_QUESTION_TITLE)[
            0
        ]
    room = min(MAX_PROMPT_SHOWN + slack_len(note) + 1, budget - slack_len(heading) - 3)
    shown = first_lines(
        prompt, PROMPT_LINES, max(room, slack_len(note) + 8), note, rows=PROMPT_ROWS
    )
    cut = shown != prompt
    body = shown.removesuffix(note).rstrip() if cut else shown
    tail = ""
    if cut:
        tail = ("\n" if body.endswith("```") else " ") + note
    if bold:
        first, newline, rest = body.partition("\n")
        body = f"{bold_line(first)}{newline}{rest}"
    text = body + tail
    return f"{heading}\n{text}" if heading else text


def chosen_text(question: Question, answer: Answer | None) -> str:
    """The chosen options (✅ marked) and the quoted start of a free-text answer."""
    if answer is None:
        return ""
    lines = []
    for option_id in dict.fromkeys(answer.selected_options):
        option = question.option(option_id)
        label = one_line(option.label) if option else option_id
        lines.append(f"✅ *{fit_escaped(label or option_id, MAX_OPTION_LINE)[0]}*")
    if answer.custom_text.strip():
        lines.append(f"✅ {quoted_free_text(answer.custom_text, MAX_FREE_TEXT_SHOWN)}")
    return "\n".join(lines)
