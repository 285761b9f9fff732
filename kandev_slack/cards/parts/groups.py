"""Identical items waiting at once, as cards show them (pure): the line of a first card
counting the identical ones waiting in its thread, the "Also from" line heading a card posted
in that thread (issue 33; kandev_slack/usecases/groups.py decides which), the offer a winner
gets to send the same answer to the others, and the summary of how that went (an ephemeral
message, replaced in place).

Task titles are the agents' text (untrusted): escaped, on one line, cut short; links go to the
tasks in Kandev, as the card's own title does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.blocks import Block, actions, button, context, section
from kandev_slack.cards.ids import AnswerAllValue
from kandev_slack.cards.limits import (
    MAX_MESSAGE_BLOCKS,
    MAX_MESSAGE_BLOCKS_TEXT,
    MAX_MESSAGE_TEXT,
    blocks_text_length,
)
from kandev_slack.cards.mrkdwn import link
from kandev_slack.cards.parts.taskline import UNTITLED_TASK, task_url
from kandev_slack.cards.text import fit_plain, one_line, shorten_mrkdwn
from kandev_slack.cards.wording import choices_summary, user_mention
from kandev_slack.core.domain import PastChoice
from kandev_slack.core.groups import MAX_LINKS, AlsoAsked

#: The chosen answer as the offer quotes it.
MAX_CHOICE = 200


def _agents(count: int) -> str:
    return f"{count} other agent" + ("" if count == 1 else "s")


#: A linked task title is cut to this many characters.
MAX_LINK_TITLE = 60


def _task_link(member: AlsoAsked, kandev_url: str) -> str:
    title = fit_plain(one_line(member.title) or UNTITLED_TASK, MAX_LINK_TITLE)[0]
    return link(task_url(kandev_url, member.task_id), title)


#: The block ids of the lines a card of identical items carries.
BLOCK_THREAD = "kq_thread"
BLOCK_ALSO_FROM = "kq_also_from"


def thread_line(shown: Sequence[AlsoAsked], count: int, *, kandev_url: str) -> str:
    """``🧵 2 more agents asked this: <task>, <task> — each has its card in this thread.`` (safe
    mrkdwn; "" for none): the first card's line, the first ``MAX_LINKS`` linked."""
    if count <= 0:
        return ""
    links = [_task_link(m, kandev_url) for m in shown[:MAX_LINKS]]
    more = ", …" if count > len(links) else ""
    agents = "1 more agent" if count == 1 else f"{count} more agents"
    where = "its card is" if count == 1 else "each has its card"
    return f"🧵 {agents} asked this: " + ", ".join(links) + more + f" — {where} in this thread."


def also_from_line(member: AlsoAsked, *, kandev_url: str) -> str:
    """``↪️ Also from <task>``: what heads a card posted in the thread of an identical one."""
    return f"↪️ Also from {_task_link(member, kandev_url)}"


def with_lines(rendered: dict[str, Any], *, first: str = "", last: str = "") -> dict[str, Any]:
    """``rendered`` (a card's text and blocks) with ``first`` as a grey line above it and
    ``last`` as one below it — each only while the message stays within Slack's limits (the
    card as it is otherwise, never refused for it); ``first`` leads its notification text."""
    blocks = list(rendered["blocks"])
    text = str(rendered["text"])
    for line, at_top in ((first, True), (last, False)):
        if not line:
            continue
        block = context(line, block_id=BLOCK_ALSO_FROM if at_top else BLOCK_THREAD)
        grown = [block, *blocks] if at_top else [*blocks, block]
        if (
            len(grown) <= MAX_MESSAGE_BLOCKS
            and blocks_text_length(grown) <= MAX_MESSAGE_BLOCKS_TEXT
        ):
            blocks = grown
    if first:
        text = shorten_mrkdwn(f"{first} · {text}", MAX_MESSAGE_TEXT, note="…")[0]
    return {**rendered, "text": text, "blocks": blocks}


def group_line(members: Sequence[AlsoAsked], *, kandev_url: str) -> str:
    """``🔁 Also asked by 2 other agents: <task>, <task>`` (safe mrkdwn; "" for none); past
    ``MAX_LINKS`` others, ``by more than 5 other agents`` and the first five (the line then
    stays as it is while more join: their cards are not all edited each time)."""
    if not members:
        return ""
    shown = [_task_link(m, kandev_url) for m in members[:MAX_LINKS]]
    if len(members) > MAX_LINKS:
        return f"🔁 Also asked by more than {_agents(MAX_LINKS)}: " + ", ".join(shown) + ", …"
    return f"🔁 Also asked by {_agents(len(members))}: " + ", ".join(shown)


def group_block(members: Sequence[AlsoAsked], *, kandev_url: str) -> Block | None:
    """The former "Also asked by" line (a question card given ``also_asked``; the outbox now
    gives none and shows identical items by :func:`thread_line` and :func:`also_from_line`)."""
    line = group_line(members, kandev_url=kandev_url)
    return context(line, block_id=ids.BLOCK_GROUP) if line else None


def choice_text(choice: PastChoice) -> str:
    """The chosen answer, as the offer and the summary quote it (``PostgreSQL``, ``“text”``)."""
    return choices_summary((choice,), budget=MAX_CHOICE) or "your answer"


def offer_message(choice: PastChoice, count: int) -> str:
    """``Send “PostgreSQL” to the 2 other agents that asked this too?``"""
    shown = choice_text(choice)
    quoted = shown if shown.startswith("“") else f"“{shown}”"
    them = "the other agent that" if count == 1 else f"the {count} other agents that"
    return f"Send {quoted} to {them} asked this too?"


def answer_all_offer(
    pending_id: str, choice: PastChoice, members: Sequence[str]
) -> tuple[str, list[Block]]:
    """(fallback text, blocks) of the offer: **Send to all 2** and **No thanks**; both carry
    the answered card's bundle and the bundles offered (Send answers exactly those; the rest is
    read again from the store)."""
    count = len(members)
    message = offer_message(choice, count)
    value = AnswerAllValue(pending_id=pending_id, members=tuple(members)).encode()
    send = "Send to it" if count == 1 else f"Send to all {count}"
    blocks: list[Block] = [
        section(message),
        actions(
            [
                button(send, ids.ACTION_ANSWER_ALL, value=value, style="primary"),
                button("No thanks", ids.ACTION_ANSWER_ALL_NO, value=value),
            ],
            block_id="kq_answer_all",
        ),
    ]
    return message, blocks


def sending_message(count: int) -> str:
    return f"Sending to {_agents(count)}…"


def answer_all_summary(
    choice: PastChoice,
    *,
    sent: int,
    meanwhile: Sequence[str | None] = (),
    forbidden: Sequence[AlsoAsked] = (),
    no_option: int = 0,
    ended: int = 0,
    not_sent: int = 0,
    yours: int = 0,
    kandev_url: str,
) -> str:
    """How Send to all went, one sentence per outcome: ``✅ Sent “PostgreSQL” to 2 agents.``,
    ``1 was answered meanwhile by @bob.``, ``You may not answer 1: <task>.``…"""
    shown = choice_text(choice)
    quoted = shown if shown.startswith("“") else f"“{shown}”"
    parts = []
    if sent:
        parts.append(f"✅ Sent {quoted} to {sent} agent{'' if sent == 1 else 's'}.")
    else:
        parts.append(f"Nothing was sent: {quoted} went to no other agent.")
    if meanwhile:
        people = [user_mention(u) for u in meanwhile]
        named = sorted({p for p in people if p})
        in_kandev = sum(1 for p in people if not p)
        who = [f"by {', '.join(named)}"] if named else []
        if in_kandev:
            who.append("in Kandev")
        verb = "was" if len(meanwhile) == 1 else "were"
        parts.append(f"{len(meanwhile)} {verb} answered meanwhile {' and '.join(who)}.")
    if forbidden:
        tasks = ", ".join(_task_link(m, kandev_url) for m in forbidden[:MAX_LINKS])
        parts.append(f"You may not answer {len(forbidden)}: {tasks}.")
    if no_option:
        verb = "has" if no_option == 1 else "have"
        parts.append(
            f"{no_option} {verb} no option {quoted}: answer {_them(no_option)} on the card."
        )
    if ended:
        verb = "no longer waits" if ended == 1 else "no longer wait"
        parts.append(f"{ended} {verb} for an answer.")
    if not_sent:
        parts.append(f"{not_sent} could not be sent now: answer {_them(not_sent)} on the card.")
    if yours:
        verb = "was" if yours == 1 else "were"
        parts.append(f"{yours} {verb} answered by you already.")
    return " ".join(parts)


def _them(count: int) -> str:
    return "it" if count == 1 else "them"


def declined_message() -> str:
    return "Nothing was sent to the other agents."


def offer_blocks_of(text: str) -> list[dict[str, Any]]:
    """A summary (or a note) as the one block that replaces the offer."""
    return [section(text)]
