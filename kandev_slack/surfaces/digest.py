"""The digest (pure): what waits, grouped by workspace, most urgent first, each with its age, a
link to its card and an "Answer…" button; and the words of ``/kandev-questions digest``.

Identical items waiting in one channel are one row (issue 33), as in the listing: the first
card's title, "3 agents", the age of the oldest, the mark of the most urgent (🔴 when one is
critical), a link to the first card and "Answer for all…" (one-question bundles; else
"Answer…"); every count counts a row as its items.

Bounded: at most :data:`MAX_DIGEST_ITEMS` rows are shown (one block each, plus a heading per
workspace), the rest counted ("… and 980 more — /kandev-questions"); the blocks' text stays
within Slack's budget for a whole message however long the titles are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, button, context, section
from kandev_slack.cards.ids import COMMAND, ButtonValue
from kandev_slack.cards.limits import (
    MAX_MESSAGE_BLOCKS,
    MAX_MESSAGE_BLOCKS_TEXT,
    MAX_MESSAGE_TEXT,
    blocks_text_length,
)
from kandev_slack.cards.mrkdwn import link
from kandev_slack.cards.parts.taskline import UNTITLED_TASK, task_url
from kandev_slack.cards.text import escape_url, fit_escaped, fit_plain, one_line, shorten_mrkdwn
from kandev_slack.cards.wording import slack_date, waited_text
from kandev_slack.core.timing.digest import (
    MAX_DIGEST_ITEMS,
    DigestAnswer,
    Render,
    Scope,
)
from kandev_slack.surfaces.listing import answer_label
from kandev_slack.surfaces.waiting import Waiting

#: Room kept for the heading and the footer.
_FRAME_ROOM = 600
_MAX_TITLE = 150
_MIN_TITLE = 10
_MAX_WORKSPACE = 80
_URGENT = {"critical": "🔴 ", "high": "🟠 "}


@dataclass(frozen=True)
class DigestView:
    """What a digest shows: ``items``, its rows (at most :data:`MAX_DIGEST_ITEMS`, most urgent
    first, each with its card's permalink when known; a group row holds the identical items it
    stands for in ``others``) of ``total`` items waiting."""

    scope: Scope
    items: tuple[Waiting, ...]
    total: int
    now: datetime
    kandev_url: str


def _count(total: int) -> str:
    return f"{total} question{' waits' if total == 1 else 's wait'}"


def _heading(view: DigestView) -> str:
    who = "for you" if view.scope == "person" else "for an answer in this channel"
    return f"☀️ *Digest: {_count(view.total)} {who}*, most urgent first"


def _workspace_of(item: Waiting) -> str:
    return one_line(item.task.workspace_name) or item.task.workspace_id or "—"


def _mark(item: Waiting) -> str:
    """🔴 / 🟠 for the row's most urgent item (critical before high), else nothing."""
    marks = [_URGENT.get((m.task.priority or "").casefold(), "") for m in item.members]
    return next((mark for mark in _URGENT.values() if mark in marks), "")


def _oldest(item: Waiting) -> datetime:
    """When the row's oldest item was asked (its age is the row's)."""
    return min(m.created_at for m in item.members)


def _item_text(item: Waiting, view: DigestView, title_limit: int) -> str:
    title = fit_plain(one_line(item.task.title) or UNTITLED_TASK, title_limit)[0]
    try:
        shown = link(task_url(view.kandev_url, item.bundle.task_id or item.task.task_id), title)
    except ValueError:
        shown = fit_escaped(title, title_limit)[0]
    parts = [f"{_mark(item)}*{shown}*"]
    if item.others:
        parts.append(f"*{item.count} agents*")
    parts.append(waited_text(_oldest(item), view.now))
    if item.permalink:  # (a group row: its first card, the others in its thread)
        parts.append(f"<{escape_url(item.permalink)}|View card>")
    elif item.card is not None and item.card.ts:
        parts.append(f"card in <#{item.card.channel}>")
    return " · ".join(parts)


def _item_block(item: Waiting, view: DigestView, index: int, budget: int) -> Block:
    limit = _MAX_TITLE
    while True:
        block = section(_item_text(item, view, limit), block_id=f"{ids.BLOCK_DIGEST}{index}")
        value = ButtonValue(pending_id=item.bundle.pending_id).encode()
        block["accessory"] = button(answer_label(item), ids.ACTION_ANSWER_MODAL, value=value)
        if blocks_text_length([block]) <= budget or limit <= _MIN_TITLE:
            return block
        limit //= 2


def render_digest(view: DigestView) -> dict[str, Any]:
    """The digest message (``view.items`` must not be empty: nothing is sent then)."""
    shown = view.items[:MAX_DIGEST_ITEMS]
    groups: dict[str, list[tuple[int, Waiting]]] = {}
    for index, item in enumerate(shown):
        groups.setdefault(_workspace_of(item), []).append((index, item))
    blocks: list[Block] = [section(_heading(view))]
    share = (MAX_MESSAGE_BLOCKS_TEXT - _FRAME_ROOM - 120 * len(groups)) // max(1, len(shown))
    for workspace, members in groups.items():
        name = fit_escaped(workspace, _MAX_WORKSPACE)[0]
        blocks.append(context(f"Workspace *{name}* · {sum(row.count for _, row in members)}"))
        blocks += [_item_block(item, view, index, share) for index, item in members]
    rest = view.total - sum(row.count for row in shown)
    if rest > 0:
        blocks.append(context(f"… and {rest} more — `{COMMAND}` lists them all"))
    else:
        blocks.append(context(f"`{COMMAND}` lists them with filters"))
    blocks = blocks[:MAX_MESSAGE_BLOCKS]
    titles = "; ".join(_fallback_title(row) for row in shown)
    text = shorten_mrkdwn(
        fit_escaped(f"Digest: {_count(view.total)}: {titles}", MAX_MESSAGE_TEXT)[0],
        MAX_MESSAGE_TEXT,
        note="…",
    )[0]
    return {"text": text, "blocks": blocks}


def _fallback_title(row: Waiting) -> str:
    """A row in the notification's text: its title, ``(3 agents)`` for a group."""
    title = fit_plain(one_line(row.task.title) or UNTITLED_TASK, 60)[0]
    return f"{title} ({row.count} agents)" if row.others else title


def digest_renderer(kandev_url: str) -> Render:
    """The use-case's renderer (kandev_slack/usecases/followups/digests.py)."""

    def render(scope: Scope, items: Sequence[Waiting], total: int, now: datetime) -> dict[str, Any]:
        view = DigestView(scope, tuple(items), total, now, kandev_url)
        return render_digest(view)

    return render


# ---- the command's words -----------------------------------------------------------------

USAGE = (
    f"`{COMMAND} digest 09:00` sends you, on weekdays at that time in your Slack time zone, a "
    f"direct message listing what waits for you; `{COMMAND} digest off` stops it; "
    f"`{COMMAND} digest now` sends it now; `{COMMAND} digest` shows your setting."
)


def digest_set_message(at: str, tz: str, next_at: datetime) -> str:
    when = slack_date(next_at)
    return (
        f"☀️ Your digest is set for *{at}* on weekdays ({fit_escaped(tz, 60)[0]}): the next "
        f"one is {when}, if anything waits for you then."
    )


def digest_off_message(was_set: bool) -> str:
    if was_set:
        return "Your digest is off."
    return f"You have no digest. {USAGE}"


def digest_setting_message(at: str | None, tz: str) -> str:
    if at is None:
        return f"You have no digest. {USAGE}"
    return (
        f"Your digest: weekdays at *{at}* ({fit_escaped(tz, 60)[0]}). "
        f"`{COMMAND} digest off` stops it."
    )


def digest_bad_message(typed: str) -> str:
    shown = fit_escaped(one_line(typed), 40)[0]
    return (
        f"“{shown}” is not a time of day: write it as HH:MM, 24-hour, such as "
        f"`{COMMAND} digest 09:00`; or `off`, `now`. Nothing was changed."
    )


def digest_sent_message(count: int) -> str:
    return f"☀️ Your digest is on its way: {count} question{'' if count == 1 else 's'} for you."


def nothing_waiting_message() -> str:
    return "Nothing is waiting for you."


def digest_unavailable_message() -> str:
    return "Kandev could not be asked what waits right now; try again in a minute."


def answer_text(answer: DigestAnswer) -> str:
    """What ``/kandev-questions digest …`` tells the person."""
    if answer.kind == "bad":
        return digest_bad_message(answer.typed)
    if answer.kind in ("off", "not_set"):
        return digest_off_message(answer.kind == "off")
    if answer.kind == "setting":
        return digest_setting_message(answer.at, answer.tz)
    if answer.kind == "set" and answer.next_at is not None:
        return digest_set_message(answer.at, answer.tz, answer.next_at)
    if answer.kind == "sent":
        return digest_sent_message(answer.count)
    if answer.kind == "nothing":
        return nothing_waiting_message()
    return digest_unavailable_message()
