"""The ``/kandev-questions`` answer: pure rendering of a listing page, its help, its errors
(and what the "Reject agent question" shortcut says on a card that is already closed).

An ephemeral message holds at most 50 blocks: one page shows at most ``MAX_PAGE_SIZE`` bundles
(two blocks each) plus a header and a footer with the "Next" button, whose value carries the
filter and where the next page starts.

Identical items waiting in one channel are one row (a *group row*: the first card's
headline, "3 agents" with a link to each card, "Answer for all…", "Snooze…" for the whole
group); the counts ("N waiting", "showing 1–5", "N more") count a group row as its items.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kandev_slack.cards import ids, words
from kandev_slack.cards.blocks import Block, actions, button, context, section
from kandev_slack.cards.ids import ACTION_NEXT, ACTION_PREVIOUS, COMMAND, ButtonValue, CodecError
from kandev_slack.cards.limits import (
    MAX_BUTTON_VALUE,
    MAX_MESSAGE_BLOCKS_TEXT,
    MAX_MESSAGE_TEXT,
    MAX_SECTION_TEXT,
    blocks_text_length,
    slack_len,
)
from kandev_slack.cards.mrkdwn import link, markdown_to_mrkdwn
from kandev_slack.cards.parts.claims import short_claim
from kandev_slack.cards.parts.taskline import UNTITLED_TASK, task_line, task_url
from kandev_slack.cards.text import (
    ELLIPSIS,
    defuse_mrkdwn,
    escape_url,
    fit_escaped,
    fit_plain,
    one_line,
    shorten_mrkdwn,
)
from kandev_slack.cards.wording import asked_at
from kandev_slack.core.limits import MAX_PAGE_SIZE
from kandev_slack.kinds.approval.cards.rows import approvals_blocks
from kandev_slack.surfaces.snooze import snooze_select, snoozed_in_listing
from kandev_slack.surfaces.waiting import BadFilter, ListingFailure, ListingPage, PageKey, Waiting

#: Approval rows on a listing page (two blocks each, beside MAX_PAGE_SIZE questions).
MAX_LIST_APPROVALS = 3

MAX_TITLE = 200
MAX_QUESTIONS_LINE = 600
MAX_WORKSPACE = 200
_MIN_TITLE = 20  # an item is never shortened further to fit the page's text budget
MAX_FILTER_SHOWN = 100


# ---- the "Next" button's value ---------------------------------------------------------------


class NextPage(BaseModel):
    """What the "Next page" / "Previous page" button carries: the filter, the bundle the page
    starts after (``backwards``: ends before) and its urgency (``rank``), the page's number."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    filter: str = Field(default="", alias="f")
    after_at: datetime = Field(alias="a")
    after_id: str = Field(alias="i", min_length=1)
    number: int = Field(default=2, alias="n", ge=1)
    rank: int = Field(default=2, alias="r", ge=0, le=2)
    backwards: bool = Field(default=False, alias="b")

    @property
    def after(self) -> PageKey:
        at = self.after_at
        return (at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC), self.after_id)

    def encode(self) -> str:
        encoded = self.model_dump_json(by_alias=True)
        if len(encoded) > MAX_BUTTON_VALUE:
            raise CodecError(f"next-page value would be {len(encoded)} characters")
        return encoded


def parse_next_page(raw: str | None) -> NextPage:
    """Decode a "Next" button value; raises CodecError on anything we did not produce."""
    if not raw:
        raise CodecError("empty next-page value")
    try:
        return NextPage.model_validate_json(raw)
    except ValidationError as exc:
        raise CodecError(f"not a kandev-slack next-page value: {raw[:80]!r}") from exc


# ---- words -----------------------------------------------------------------------------------


def _quoted(text: str) -> str:
    return "“" + fit_escaped(text, MAX_FILTER_SHOWN)[0] + "”"


def _message(text: str, blocks: list[Block]) -> dict[str, Any]:
    """``text`` (safe mrkdwn) is the notification / screen-reader fallback."""
    shown = shorten_mrkdwn(defuse_mrkdwn(text), MAX_MESSAGE_TEXT, note="…")[0]
    return {"text": shown, "blocks": blocks}


def render_problem(message: str) -> dict[str, Any]:
    """An error or refusal (``message`` is safe mrkdwn from the functions above)."""
    return _message(message, [section(message)])


def problem_message(problem: BadFilter | ListingFailure) -> str:
    """The words for a filter that cannot be used, or for Kandev failing to list."""
    if isinstance(problem, ListingFailure):
        if problem.kind == "unreachable":
            return words.kandev_unreachable_message(problem.kandev_url)
        if problem.kind == "auth":
            return words.kandev_auth_message()
        return words.kandev_failed_message(problem.detail)
    if problem.kind == "too_long":
        return words.filter_too_long_message(problem.length, problem.limit)
    if problem.kind == "empty_term":
        return words.empty_filter_term_message(problem.term)
    return words.unknown_priority_message(problem.value, problem.known)


def render_listing_problem(problem: BadFilter | ListingFailure) -> dict[str, Any]:
    """A bad filter or a failed listing, said (see :func:`problem_message`)."""
    return render_problem(problem_message(problem))


def render_help(*, accounts: bool = False) -> dict[str, Any]:
    """``/kandev-questions help``; ``accounts``: with the commands of a person's own Kandev
    account (when a route uses them)."""
    lines = [
        f"*{COMMAND}* lists the agent questions waiting for an answer, critical and high ones "
        "first, then oldest first. Only you see the list.",
        f"• `{COMMAND}` — everything waiting",
        f"• `{COMMAND} Platform` — only the Kandev workspace named Platform",
        f"• `{COMMAND} database migration` — tasks whose title, questions or agent name "
        "contain all of those words",
        f"• `{COMMAND} label:database` — tasks with that label (several: all of them)",
        f"• `{COMMAND} priority:critical` — tasks of that priority (several: any of them)",
        f"• `{COMMAND} Platform label:database priority:high` — terms combine",
        f"• `{COMMAND} subscribe Platform` (or `label:database`, or `all`) — a direct message "
        "with each new question you may answer there; `unsubscribe …` stops it, "
        "`subscriptions` lists yours",
        f"• `{COMMAND} digest 09:00` — a direct message on weekdays at that time (your time "
        "zone) listing what waits for you; `digest now`, `digest off`",
        *(_account_help() if accounts else []),
        f"• `{COMMAND} help` — this help",
        "*Answer…* opens the same form as the card. To turn a question down, use *Reject…* on "
        "its card, or the message shortcut *Reject agent question* (the ⋮ menu of the card).",
    ]
    return _message(f"How to use {COMMAND}", [section("\n".join(lines))])


def _account_help() -> list[str]:
    return [
        f"• `{COMMAND} connect` — connect your own Kandev account (a personal access token "
        f"from {words.MINT_WHERE}): your answers and approvals then reach Kandev as you",
        f"• `{COMMAND} whoami` — which Kandev account you are connected as",
        f"• `{COMMAND} disconnect` — forget your Kandev token",
    ]


# ---- the listing -----------------------------------------------------------------------------


#: One prompt in the listing's line of questions, at most this long.
MAX_PROMPT_IN_LIST = 200


def _questions_line(item: Waiting, limit: int = MAX_QUESTIONS_LINE) -> str:
    """The questions themselves (their prompts, Kandev's Markdown converted as on the
    cards; a title only when there is no prompt), ``1/2 ·`` numbered when there are
    several."""
    questions = item.bundle.questions
    shown = []
    for index, question in enumerate(questions):
        prompt = one_line(markdown_to_mrkdwn(question.prompt))
        if prompt:
            text = shorten_mrkdwn(prompt, MAX_PROMPT_IN_LIST, note=ELLIPSIS)[0]
        else:
            text = fit_escaped(one_line(question.title), MAX_PROMPT_IN_LIST)[0]
        if len(questions) > 1:
            text = (
                f"{index + 1}/{len(questions)} · {text}"
                if text
                else f"{index + 1}/{len(questions)}"
            )
        if text:
            shown.append(text)
    return shorten_mrkdwn(" · ".join(shown), limit, note=ELLIPSIS)[0] if shown else ""


def _title(item: Waiting, limit: int = MAX_TITLE) -> str:
    return fit_plain(one_line(item.task.title) or UNTITLED_TASK, limit)[0]


#: The links of a group row ("3 agents: 1 · 2 · 3"), at most this long (then "+N more").
MAX_AGENTS_LINKS = 2000
_MIN_AGENTS_LINKS = 200


def answer_label(item: Waiting) -> str:
    """The row's answer button: "Answer for all…" on a group row of one-question bundles (its
    form answers the first card; after the win, Send to all offers the same choice to the
    others, each checked on its own), else "Answer…"."""
    if item.others and len(item.bundle.questions) == 1:
        return "Answer for all…"
    return "Answer…"


def agents_links(item: Waiting, *, kandev_url: str, limit: int = MAX_AGENTS_LINKS) -> str:
    """``*3 agents*: 1 · 2 · 3``: how many items a group row stands for, each number linked to
    that item's card (else its task in Kandev); the last ones counted ("+2 more") beyond
    ``limit`` characters. Empty for an item alone."""
    if not item.others:
        return ""
    members = item.members
    head = f"*{len(members)} agents*: "
    parts = []
    for number, member in enumerate(members, 1):
        url = member.permalink or task_url(kandev_url, member.bundle.task_id or member.task.task_id)
        parts.append(f"<{escape_url(url)}|{number}>")
    text = head + " · ".join(parts)
    while len(text) > limit and parts:
        parts.pop()
        more = f"+{len(members) - len(parts)} more"
        text = head + " · ".join([*parts, more])
    return text


def item_blocks(
    item: Waiting, *, kandev_url: str, now: datetime, budget: int = MAX_MESSAGE_BLOCKS_TEXT
) -> list[Block]:
    """One waiting bundle: title (linked to Kandev) and its questions with an "Answer…"
    button, then workspace · age · where its card is; its texts shortened further until they
    hold at most ``budget`` characters together.

    A group row (identical items in one channel, ``item.others``) shows the first card's
    headline, "3 agents" with a link to each card, and "Answer for all…"; its second block is
    a row of controls: "Conversation" and "Snooze…" (which snoozes every item of the row the
    person may see, as the App Home's group rows do), the details joining the headline."""
    limits = (MAX_TITLE, MAX_QUESTIONS_LINE, MAX_WORKSPACE, MAX_AGENTS_LINKS)
    while True:
        blocks, whole = _item_blocks(item, kandev_url, now, limits)
        if (whole and blocks_text_length(blocks) <= budget) or limits[0] <= _MIN_TITLE:
            return blocks
        title, questions, workspace, agents = limits
        agents = max(_MIN_AGENTS_LINKS, agents // 2)
        limits = (title // 2, questions // 2, workspace // 2, agents)


def _item_blocks(
    item: Waiting, kandev_url: str, now: datetime, limits: tuple[int, int, int, int]
) -> tuple[list[Block], bool]:
    """The row's two blocks, and whether each section's text fit whole (not cut at Slack's
    limit of a section: then the limits are lowered)."""
    title_limit, questions_limit, workspace_limit, agents_limit = limits
    url = task_url(kandev_url, item.bundle.task_id or item.task.task_id)
    text = f"*{link(url, _title(item, title_limit))}*"
    questions = _questions_line(item, questions_limit)
    if questions:
        text += "\n" + questions
    agents = agents_links(item, kandev_url=kandev_url, limit=agents_limit)
    if agents:
        text += "\n" + agents
    meta = []
    workspace = one_line(item.task.workspace_name)
    if workspace:
        meta.append("Workspace *" + fit_escaped(workspace, workspace_limit)[0] + "*")
    meta.append(asked_at(item.bundle.created_at))
    if (claim := item.claim(now)) is not None:
        meta.append(short_claim(claim))
    if not item.others:  # (a group row links each card on its "3 agents" line)
        meta.append(_where(item))
    line = task_line(item.task, limit=questions_limit)
    if line:
        meta.append(line)
    details = " · ".join(meta)
    conversation = ButtonValue(pending_id=item.bundle.pending_id, conversation=True).encode()
    talk = button("Conversation", ids.ACTION_CONVERSATION, value=conversation)
    value = ButtonValue(pending_id=item.bundle.pending_id).encode()
    answer = button(answer_label(item), ids.ACTION_ANSWER_MODAL, value=value)
    if item.others:
        # A group row: its details end its first block; its second is a row of controls,
        # "Conversation" and the group's "Snooze…" (two blocks still, as a page counts them).
        text += "\n" + details
        main = section(text)
        main["accessory"] = answer
        select = snooze_select(item.bundle.pending_id, group=True)
        controls = [talk] if select is None else [talk, select]
        return [main, {"type": "actions", "elements": controls}], _whole(text)
    main = section(text)
    main["accessory"] = answer
    below = section(details)
    below["accessory"] = talk
    return [main, below], _whole(text) and _whole(details)


def _whole(text: str) -> bool:
    """Whether ``text`` fits a section as it is (a longer one is cut by ``section``)."""
    return slack_len(text) <= MAX_SECTION_TEXT


def _where(item: Waiting) -> str:
    """A link to the item's card, or where it is, or that it is not posted yet."""
    if item.permalink:
        return f"<{escape_url(item.permalink)}|View card>"
    if item.card is not None and item.card.ts:
        return f"card in <#{item.card.channel}>"
    return "no card posted yet"


def questions_waiting(count: int) -> str:
    """``1 question is waiting for an answer`` / ``7 questions are waiting for an answer``."""
    return f"{count} question{' is' if count == 1 else 's are'} waiting for an answer"


def _urgent_summary(page: ListingPage) -> str:
    """``🔴 2 critical · 🟠 1 high — listed first``; empty when none is urgent."""
    critical, high = page.urgent
    parts = []
    if critical:
        parts.append(f"🔴 {critical} critical")
    if high:
        parts.append(f"🟠 {high} high")
    return " · ".join(parts) + " — listed first" if parts else ""


def _heading(page: ListingPage) -> str:
    if page.workspace is not None:
        scope = f" in workspace *{fit_escaped(page.workspace.name or page.workspace.id, 200)[0]}*"
    elif page.query.text:
        scope = f" matching {_quoted(page.query.text)}"
    else:
        scope = ""
    count = f"*{questions_waiting(page.total)}{scope}*, most urgent first, then oldest"
    if page.total > page.shown_count:
        last = page.first + page.shown_count - 1
        count += f" · showing {page.first}–{last}"
    urgent = _urgent_summary(page)
    lines = [count, urgent, snoozed_in_listing(page.snoozed) if page.snoozed else ""]
    return "\n".join(line for line in lines if line)


def _empty_text(page: ListingPage) -> str:
    if page.query.approvals_only:
        return "No approval is waiting for a decision right now. 🎉"
    if page.workspace is not None:
        name = fit_escaped(page.workspace.name or page.workspace.id, 200)[0]
        return f"Nothing is waiting for an answer in workspace *{name}*. 🎉"
    if page.query.text:
        names = ", ".join(fit_escaped(n, 60)[0] for n in page.workspace_names[:10])
        hint = f" Workspaces: {names}." if names else ""
        return (
            f"Nothing waiting matches {_quoted(page.query.text)}. Try a workspace name or other "
            f"words from a task title or question.{hint} `{COMMAND} help` explains."
        )
    if page.first > 1:
        return "Nothing more is waiting: the rest was answered meanwhile. 🎉"
    return "Nothing is waiting for an answer right now. 🎉 New agent questions appear as cards."


def _fallback(page: ListingPage) -> str:
    titles = "; ".join(
        fit_escaped(one_line(it.task.title) or UNTITLED_TASK, MAX_TITLE)[0] for it in page.items
    )
    head = questions_waiting(page.total)
    if page.approvals:
        count = sum(1 + len(page.approval_others.get(c.pending_id, ())) for c, _ in page.approvals)
        head = f"{count} approval{'s' if count > 1 else ''} waiting · {head}"
    return f"{head}: {titles}" if titles else head


def render_listing(page: ListingPage, *, kandev_url: str, now: datetime) -> dict[str, Any]:
    """One page of the listing (or its friendly empty state), within Block Kit's limits."""
    approvals = approvals_blocks(
        page.approvals,
        kandev_url=kandev_url,
        limit=MAX_LIST_APPROVALS,
        others=page.approval_others,
    )
    if not page.items:
        text = _empty_text(page)
        if approvals:
            tail = [] if page.query.approvals_only else [context(text)]
            return _message(_fallback(page), [*approvals, *tail])
        snoozed = [context(snoozed_in_listing(page.snoozed))] if page.snoozed else []
        return _message(text, [section(text), *snoozed])
    blocks: list[Block] = [*approvals, section(_heading(page))]
    shown = page.items[:MAX_PAGE_SIZE]
    footer_room = 200  # the footer's context and "Next page" button
    share = (MAX_MESSAGE_BLOCKS_TEXT - blocks_text_length(blocks) - footer_room) // len(shown)
    for item in shown:
        blocks += item_blocks(item, kandev_url=kandev_url, now=now, budget=share)
    blocks += _pager(page)
    return _message(_fallback(page), blocks)


def _pager(page: ListingPage) -> list[Block]:
    """``Page 2 · 5 more`` and the "Previous page" / "Next page" buttons (nothing on a single
    page)."""
    footer = f"Page {page.number}"
    buttons: list[Block] = []
    if page.previous_before is not None:
        back = NextPage(
            filter=page.query.text,
            after_at=page.previous_before[0],
            after_id=page.previous_before[1],
            number=max(1, page.number - 1),
            rank=page.previous_rank,
            backwards=True,
        )
        buttons.append(button("Previous page", ACTION_PREVIOUS, value=back.encode()))
    if page.next_after is not None:
        last_shown = page.first + page.shown_count - 1
        footer += f" · {page.total - last_shown} more"
        value = NextPage(
            filter=page.query.text,
            after_at=page.next_after[0],
            after_id=page.next_after[1],
            number=page.number + 1,
            rank=page.next_rank,
        )
        buttons.append(button("Next page", ACTION_NEXT, value=value.encode()))
    elif page.number > 1:
        footer += " · the last one"
    if not buttons:
        return [context(footer)] if page.number > 1 else []
    return [context(footer), actions(buttons, block_id="kq_list")]
