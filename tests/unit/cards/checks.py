"""Block Kit and safety checks of what the renderers produce: the fake Slack's validator
(fakeslack ``validate_message``/``validate_view``, the one every e2e call goes through),
every violation (warnings too) a failure, plus what is ours rather than Slack's: a card or modal
has blocks, a view is a modal, and every ``<…>`` in mrkdwn or the text fallback is a vetted
link, a date token or a mention of an allowed user (tests/unit/cards/safety.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kandev_slack.kits.fakeslack import validate_message, validate_view
from tests.unit.cards.safety import unsafe_angles


class LimitViolation(AssertionError):
    pass


def _mrkdwn_strings(node: Any) -> Iterator[str]:
    if isinstance(node, list):
        for value in node:
            yield from _mrkdwn_strings(value)
    elif isinstance(node, dict):
        if node.get("type") == "mrkdwn" and isinstance(node.get("text"), str):
            yield node["text"]
        for value in node.values():
            yield from _mrkdwn_strings(value)


def _unsafe(blocks: Any, allowed_users: Iterable[str]) -> list[str]:
    return [
        f"unsafe <…> in mrkdwn: {bad[:3]}"
        for text in _mrkdwn_strings(blocks)
        if (bad := unsafe_angles(text, allowed_users=allowed_users))
    ]


def message_problems(message: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> list[str]:
    blocks = message.get("blocks", [])
    problems = [str(v) for v in validate_message("chat.postMessage", message.get("text"), blocks)]
    if not blocks:
        problems.append("a message without blocks")
    text = message.get("text")
    if isinstance(text, str) and (bad := unsafe_angles(text, allowed_users=allowed_users)):
        problems.append(f"unsafe <…> in text: {bad[:3]}")
    return problems + _unsafe(blocks, allowed_users)


def view_problems(view: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> list[str]:
    problems = [str(v) for v in validate_view("views.open", view)]
    if view.get("type") != "modal":
        problems.append("not a modal")
    if not view.get("blocks"):
        problems.append("a modal without blocks")
    return problems + _unsafe(view.get("blocks", []), allowed_users)


def assert_valid_message(message: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> None:
    problems = message_problems(message, allowed_users=allowed_users)
    if problems:
        raise LimitViolation("; ".join(problems))


def assert_valid_view(view: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> None:
    problems = view_problems(view, allowed_users=allowed_users)
    if problems:
        raise LimitViolation("; ".join(problems))
