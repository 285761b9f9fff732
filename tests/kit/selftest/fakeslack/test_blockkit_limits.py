"""The limits the fake Slack's Block Kit validator checks beyond slack_sdk's own (they were the
cards' separate checker's): UTF-16 lengths, blank texts, ``verbatim`` on plain_text, slack_sdk
giving back exactly what was sent, option and ``max_length`` bounds, a message's text altogether,
and a fallback Slack truncates."""

from __future__ import annotations

from typing import Any

import pytest

from kandev_slack.kits.fakeslack import validate_message, validate_view

EMOJI = "\U0001f600"  # outside the BMP: 2 UTF-16 code units


def _section(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text, **extra}}


def _errors(found: list) -> list[tuple[str, str]]:
    return [(v.pointer, v.message) for v in found if v.level == "error"]


def _pointers(found: list, level: str = "error") -> list[str]:
    return [v.pointer for v in found if v.level == level]


def test_lengths_are_utf16_code_units() -> None:
    fits = [{"type": "header", "text": {"type": "plain_text", "text": EMOJI * 75}}]
    over = [{"type": "header", "text": {"type": "plain_text", "text": EMOJI * 76}}]
    assert validate_message("chat.postMessage", "t", fits) == []
    assert _pointers(validate_message("chat.postMessage", "t", over)) == ["/blocks/0/text/text"]


@pytest.mark.parametrize("text", ["", " ", "\n\t "])
def test_a_blank_text_is_refused(text: str) -> None:
    found = validate_message("chat.postMessage", "t", [_section(text)])
    assert "/blocks/0/text/text" in _pointers(found)


def test_verbatim_is_for_mrkdwn_only() -> None:
    plain = {"type": "section", "text": {"type": "plain_text", "text": "x", "verbatim": True}}
    assert "/blocks/0/text/verbatim" in _pointers(
        validate_message("chat.postMessage", "t", [plain])
    )
    assert validate_message("chat.postMessage", "t", [_section("x", verbatim=True)]) == []


def test_a_key_slack_sdk_does_not_know_is_refused() -> None:
    misspelt = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}, "acessory": {}}
    [(pointer, message)] = _errors(validate_message("chat.postMessage", "t", [misspelt]))
    assert pointer == "/blocks/0" and "gives back another block" in message


def test_a_select_needs_an_option_and_max_length_at_least_one() -> None:
    select = {"type": "static_select", "action_id": "s", "options": []}
    text_input = {"type": "plain_text_input", "action_id": "i", "max_length": 0}
    blocks = [
        {"type": "actions", "elements": [select]},
        {"type": "input", "label": {"type": "plain_text", "text": "L"}, "element": text_input},
    ]
    view = {
        "type": "modal",
        "title": {"type": "plain_text", "text": "T"},
        "submit": {"type": "plain_text", "text": "Send"},
        "blocks": blocks,
    }
    pointers = _pointers(validate_view("views.open", view))
    assert "/view/blocks/0/elements/0/options" in pointers
    assert "/view/blocks/1/element/max_length" in pointers


def test_a_message_whose_blocks_hold_too_much_text_altogether_is_refused() -> None:
    within = [_section("x" * 2750) for _ in range(4)]  # 11,000
    over = [*within, _section("x")]
    assert validate_message("chat.postMessage", "t", within) == []
    [(pointer, message)] = _errors(validate_message("chat.postMessage", "t", over))
    assert pointer == "/blocks" and message.startswith("msg_blocks_too_long")


def test_a_fallback_slack_truncates_is_a_warning() -> None:
    assert validate_message("chat.postMessage", "x" * 4000, None) == []
    found = validate_message("chat.postMessage", EMOJI * 2001, None)
    assert _pointers(found, "warning") == ["/text"] and _errors(found) == []
