"""Tiny constructors for the Block Kit pieces the cards and modals use (plain dicts)."""

from __future__ import annotations

from typing import Any

from kandev_slack.cards.limits import (
    MAX_BUTTON_TEXT,
    MAX_SECTION_TEXT,
    MAX_VIEW_CLOSE,
    MAX_VIEW_SUBMIT,
    MAX_VIEW_TITLE,
    slack_len,
)
from kandev_slack.cards.text import ELLIPSIS, defuse_mrkdwn, fit_plain, one_line, shorten_mrkdwn

Block = dict[str, Any]


def plain(text: str, limit: int, *, fallback: str = "(empty)") -> dict[str, Any]:
    """A plain_text object (emoji allowed), single line, within ``limit``, never empty."""
    shown = fit_plain(one_line(text) or fallback, limit)[0]
    return {"type": "plain_text", "text": shown, "emoji": True}


def mrkdwn(text: str) -> dict[str, Any]:
    """A mrkdwn text object for text that is already safe and within its limit.

    ``verbatim``: Slack's automatic parsing (plain URLs, channel names, mention words) stays
    off; only the ``<…>`` tokens the renderers made are links, dates or mentions. Broadcast words
    are defused once more over the whole text (``defuse_mrkdwn``: text the escaping helpers made
    is already defused and keeps its length; should defusing lengthen it past a text object's
    limit, it is shortened)."""
    safe = defuse_mrkdwn(text)
    if slack_len(safe) > MAX_SECTION_TEXT:
        safe = shorten_mrkdwn(safe, MAX_SECTION_TEXT, note=ELLIPSIS)[0]
    return {"type": "mrkdwn", "text": safe, "verbatim": True}


def section(text: str, *, block_id: str | None = None) -> Block:
    block: Block = {"type": "section", "text": mrkdwn(text)}
    if block_id:
        block["block_id"] = block_id
    return block


def context(*texts: str, block_id: str | None = None) -> Block:
    block: Block = {"type": "context", "elements": [mrkdwn(t) for t in texts]}
    if block_id:
        block["block_id"] = block_id
    return block


def divider() -> Block:
    return {"type": "divider"}


def button(
    text: str,
    action_id: str,
    *,
    value: str | None = None,
    url: str | None = None,
    style: str | None = None,
) -> Block:
    element: Block = {
        "type": "button",
        "text": plain(text, MAX_BUTTON_TEXT, fallback="(no label)"),
        "action_id": action_id,
    }
    if value is not None:
        element["value"] = value
    if url is not None:
        element["url"] = url
    if style is not None:
        element["style"] = style
    return element


def actions(elements: list[Block], *, block_id: str) -> Block:
    return {"type": "actions", "block_id": block_id, "elements": elements}


def modal_view(
    callback_id: str,
    title: str,
    blocks: list[dict[str, Any]],
    *,
    submit: str | None = None,
    close: str = "Cancel",
    metadata: str | None = None,
) -> dict[str, Any]:
    """A modal view: its title and buttons fitted to Slack's limits; ``submit`` None: none
    (the view only informs); ``metadata``: its private_metadata."""
    view: dict[str, Any] = {
        "type": "modal",
        "callback_id": callback_id,
        "title": plain(title, MAX_VIEW_TITLE),
        "close": plain(close, MAX_VIEW_CLOSE),
        "blocks": blocks,
    }
    if submit:
        view["submit"] = plain(submit, MAX_VIEW_SUBMIT)
    if metadata is not None:
        view["private_metadata"] = metadata
    return view
