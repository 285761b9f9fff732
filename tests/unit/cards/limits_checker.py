"""Validates Block Kit payloads against Slack's limits (shared/slack-platform.md).

slack_sdk.models catches most violations (``Block.parse_all(...)`` then ``to_dict()``,
``View(**d).to_dict()``); the round trip must also give back exactly what we sent (so no key
was misspelt and silently dropped). On top, the checks slack_sdk misses or is lax about: block
counts, radio options, ``max_length``, option descriptions, empty texts, unique ids, text
lengths measured in UTF-16 code units (never less than code points), and the text of all of a
message's blocks together (Slack refuses too much with ``msg_blocks_too_long``). And safety:
every ``<…>`` in mrkdwn is a vetted http(s) link, a Slack date token, or a mention of an
allowed user.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from bot.cards import limits as L
from bot.cards.limits import blocks_text_length, slack_len

_SAFE_LINK = re.compile(r"<https?://[^\s<>|]+(?:\|[^<>]*)?>")
_DATE = re.compile(r"<!date\^\d+\^[^<>|^]*\|[^<>]*>")
_ANGLE = re.compile(r"<[^<>]*>?")


class LimitViolation(AssertionError):
    pass


def _walk(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}[{i}]")


def _mrkdwn_strings(node: Any) -> Iterator[str]:
    for _, obj in _walk(node):
        if obj.get("type") == "mrkdwn" and isinstance(obj.get("text"), str):
            yield obj["text"]


def unsafe_angles(text: str, *, allowed_users: Iterable[str] = ()) -> list[str]:
    """Every ``<…>`` in ``text`` that is not a vetted link, date token or allowed mention."""
    allowed = {f"<@{u}>" for u in allowed_users}
    bad = []
    for match in _ANGLE.finditer(text):
        token = match.group(0)
        if token in allowed or _SAFE_LINK.fullmatch(token) or _DATE.fullmatch(token):
            continue
        bad.append(token)
    return bad


def _check(condition: bool, problems: list[str], message: str) -> None:
    if not condition:
        problems.append(message)


def _check_text_object(path: str, obj: dict[str, Any], problems: list[str]) -> None:
    text = obj.get("text")
    _check(isinstance(text, str) and text.strip() != "", problems, f"{path}: empty text")
    if isinstance(text, str):
        _check(slack_len(text) <= 3000, problems, f"{path}: text {slack_len(text)} > 3000")
    if obj["type"] == "plain_text":
        _check("verbatim" not in obj, problems, f"{path}: verbatim on plain_text")


def _len_at_most(path: str, value: str | None, limit: int, problems: list[str]) -> None:
    if value is not None:
        _check(slack_len(value) <= limit, problems, f"{path}: {slack_len(value)} > {limit}")


def _check_element(path: str, el: dict[str, Any], problems: list[str]) -> None:
    kind = el.get("type")
    _len_at_most(f"{path}.action_id", el.get("action_id"), L.MAX_ACTION_ID, problems)
    if "placeholder" in el:
        _len_at_most(f"{path}.placeholder", el["placeholder"]["text"], L.MAX_PLACEHOLDER, problems)
    if kind == "button":
        _len_at_most(f"{path}.text", el["text"]["text"], L.MAX_BUTTON_TEXT, problems)
        _len_at_most(f"{path}.value", el.get("value"), L.MAX_BUTTON_VALUE, problems)
        _len_at_most(f"{path}.url", el.get("url"), L.MAX_URL, problems)
        _check(el["text"]["type"] == "plain_text", problems, f"{path}: button text not plain")
    if kind in ("radio_buttons", "checkboxes"):
        count = len(el.get("options", []))
        _check(1 <= count <= L.MAX_RADIO_OPTIONS, problems, f"{path}: {count} options")
    if kind == "static_select":
        count = len(el.get("options", []))
        _check(1 <= count <= L.MAX_SELECT_OPTIONS, problems, f"{path}: {count} options")
    for i, option in enumerate(el.get("options", [])):
        opath = f"{path}.options[{i}]"
        _len_at_most(f"{opath}.text", option["text"]["text"], L.MAX_OPTION_TEXT, problems)
        _len_at_most(f"{opath}.value", option.get("value"), L.MAX_OPTION_VALUE, problems)
        if "description" in option:
            desc = option["description"]["text"]
            _len_at_most(f"{opath}.description", desc, L.MAX_OPTION_DESCRIPTION, problems)
    if kind == "plain_text_input" and "max_length" in el:
        top = el["max_length"]
        _check(1 <= top <= L.MAX_TEXT_INPUT_LENGTH, problems, f"{path}: max_length {top}")
    if "options" in el:
        values = [o.get("value") for o in el["options"]]
        _check(len(values) == len(set(values)), problems, f"{path}: duplicate option values")


def _check_block(path: str, block: dict[str, Any], problems: list[str]) -> None:
    kind = block.get("type")
    _len_at_most(f"{path}.block_id", block.get("block_id"), L.MAX_BLOCK_ID, problems)
    if kind == "section":
        _check("text" in block or "fields" in block, problems, f"{path}: section without text")
        if "text" in block:
            text = block["text"]["text"]
            _len_at_most(f"{path}.text", text, L.MAX_SECTION_TEXT, problems)
    elif kind == "header":
        _len_at_most(f"{path}.text", block["text"]["text"], L.MAX_HEADER_TEXT, problems)
    elif kind == "context":
        count = len(block.get("elements", []))
        _check(1 <= count <= L.MAX_CONTEXT_ELEMENTS, problems, f"{path}: {count} elements")
    elif kind == "actions":
        elements = block.get("elements", [])
        count = len(elements)
        _check(1 <= count <= L.MAX_ACTIONS_ELEMENTS, problems, f"{path}: {count} elements")
        action_ids = [e.get("action_id") for e in elements if e.get("action_id")]
        _check(len(action_ids) == len(set(action_ids)), problems, f"{path}: duplicate action_id")
    elif kind == "input":
        _len_at_most(f"{path}.label", block["label"]["text"], L.MAX_INPUT_LABEL, problems)
        if "hint" in block:
            _len_at_most(f"{path}.hint", block["hint"]["text"], L.MAX_INPUT_HINT, problems)
        _check(block["label"]["type"] == "plain_text", problems, f"{path}: label not plain")
    elements = block.get("elements", []) + ([block["element"]] if "element" in block else [])
    for i, element in enumerate(elements):
        if isinstance(element, dict) and element.get("type") not in ("mrkdwn", "plain_text"):
            _check_element(f"{path}.elements[{i}]", element, problems)


def _check_sdk_round_trip(blocks: list[dict[str, Any]], problems: list[str]) -> None:
    try:
        parsed = Block.parse_all(blocks)
        for i, (block, original) in enumerate(zip(parsed, blocks, strict=True)):
            if block is None:
                problems.append(f"blocks[{i}]: slack_sdk does not know type {original['type']}")
                continue
            back = block.to_dict()
            if json.loads(json.dumps(back)) != original:
                problems.append(f"blocks[{i}]: slack_sdk round trip differs: {back} != {original}")
    except Exception as exc:  # SlackObjectFormationError and friends
        problems.append(f"slack_sdk rejected the blocks: {exc}")


def _check_blocks(
    blocks: list[dict[str, Any]], max_blocks: int, problems: list[str], allowed_users: Iterable[str]
) -> None:
    _check(1 <= len(blocks) <= max_blocks, problems, f"{len(blocks)} blocks (max {max_blocks})")
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    _check(len(block_ids) == len(set(block_ids)), problems, "duplicate block_id")
    for i, block in enumerate(blocks):
        _check_block(f"blocks[{i}]", block, problems)
    for path, obj in _walk(blocks, "blocks"):
        if obj.get("type") in ("plain_text", "mrkdwn") and "text" in obj:
            _check_text_object(path, obj, problems)
    for text in _mrkdwn_strings(blocks):
        bad = unsafe_angles(text, allowed_users=allowed_users)
        _check(not bad, problems, f"unsafe <…> in mrkdwn: {bad[:3]}")
    _check_sdk_round_trip(blocks, problems)


def message_problems(message: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> list[str]:
    problems: list[str] = []
    text = message.get("text")
    _check(isinstance(text, str) and text.strip() != "", problems, "missing text fallback")
    if isinstance(text, str):
        _len_at_most("text", text, L.MAX_MESSAGE_TEXT, problems)
        bad = unsafe_angles(text, allowed_users=allowed_users)
        _check(not bad, problems, f"unsafe <…> in text: {bad[:3]}")
    _check_blocks(message.get("blocks", []), L.MAX_MESSAGE_BLOCKS, problems, allowed_users)
    together = blocks_text_length(message.get("blocks", []))
    _check(
        together <= L.MAX_MESSAGE_BLOCKS_TEXT,
        problems,
        f"the blocks hold {together} characters of text altogether (Slack: msg_blocks_too_long)",
    )
    return problems


def view_problems(view: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> list[str]:
    problems: list[str] = []
    _check(view.get("type") == "modal", problems, "not a modal")
    _len_at_most("title", view["title"]["text"], L.MAX_VIEW_TITLE, problems)
    if "submit" in view:
        _len_at_most("submit", view["submit"]["text"], L.MAX_VIEW_SUBMIT, problems)
    if "close" in view:
        _len_at_most("close", view["close"]["text"], L.MAX_VIEW_CLOSE, problems)
    _len_at_most("private_metadata", view.get("private_metadata"), 3000, problems)
    _len_at_most("callback_id", view.get("callback_id"), L.MAX_CALLBACK_ID, problems)
    has_input = any(b.get("type") == "input" for b in view.get("blocks", []))
    _check(not has_input or "submit" in view, problems, "inputs without a submit button")
    _check_blocks(view.get("blocks", []), L.MAX_VIEW_BLOCKS, problems, allowed_users)
    try:
        View(**view).to_dict()
    except Exception as exc:
        problems.append(f"slack_sdk rejected the view: {exc}")
    return problems


def assert_valid_message(message: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> None:
    problems = message_problems(message, allowed_users=allowed_users)
    if problems:
        raise LimitViolation("; ".join(problems))


def assert_valid_view(view: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> None:
    problems = view_problems(view, allowed_users=allowed_users)
    if problems:
        raise LimitViolation("; ".join(problems))
