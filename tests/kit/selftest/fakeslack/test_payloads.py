"""Payload pieces the driver builds: block_actions items and view state.values."""

from __future__ import annotations

from typing import Any

import pytest

from kandev_slack.kits.fakeslack import (
    ViewSubmissionBlocked,
    assign_default_ids,
    build_state_values,
    find_element,
    payloads,
)


def _option(value: str) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": value.upper()}, "value": value}


BLOCKS: list[dict[str, Any]] = [
    {
        "type": "input",
        "block_id": "radio",
        "label": {"type": "plain_text", "text": "R"},
        "element": {
            "type": "radio_buttons",
            "action_id": "r",
            "options": [_option("a"), _option("b")],
        },
    },
    {
        "type": "input",
        "block_id": "boxes",
        "optional": True,
        "label": {"type": "plain_text", "text": "C"},
        "element": {
            "type": "checkboxes",
            "action_id": "c",
            "options": [_option("x"), _option("y")],
        },
    },
    {
        "type": "input",
        "block_id": "pick",
        "optional": True,
        "label": {"type": "plain_text", "text": "S"},
        "element": {
            "type": "static_select",
            "action_id": "s",
            "initial_option": _option("p"),
            "option_groups": [
                {
                    "label": {"type": "plain_text", "text": "G"},
                    "options": [_option("p"), _option("q")],
                }
            ],
        },
    },
    {
        "type": "input",
        "block_id": "free",
        "optional": True,
        "label": {"type": "plain_text", "text": "T"},
        "element": {"type": "plain_text_input", "action_id": "t", "max_length": 5},
    },
]


def test_state_values_have_slacks_shapes_and_defaults() -> None:
    state = build_state_values(BLOCKS, {"radio": {"r": "b"}, "boxes": {"c": ["y"]}})
    assert state["radio"]["r"] == {"type": "radio_buttons", "selected_option": _option("b")}
    assert state["boxes"]["c"] == {"type": "checkboxes", "selected_options": [_option("y")]}
    assert state["pick"]["s"] == {"type": "static_select", "selected_option": _option("p")}
    assert state["free"]["t"] == {"type": "plain_text_input", "value": None}


def test_client_side_rules_and_unknown_inputs() -> None:
    with pytest.raises(ViewSubmissionBlocked, match="radio"):
        build_state_values(BLOCKS, {})
    with pytest.raises(ViewSubmissionBlocked, match="max_length"):
        build_state_values(BLOCKS, {"radio": {"r": "a"}, "free": {"t": "toolong"}})
    with pytest.raises(KeyError, match="radio/r"):
        build_state_values(BLOCKS, {"nope": {"r": "a"}})
    with pytest.raises(LookupError):
        build_state_values(BLOCKS, {"radio": {"r": "zzz"}})
    relaxed = build_state_values(BLOCKS, {}, enforce_client_rules=False)
    assert relaxed["radio"]["r"]["selected_option"] is None


def test_action_items_for_buttons_and_selects() -> None:
    blocks = assign_default_ids(
        [
            {
                "type": "actions",
                "elements": [
                    {"type": "button", "text": {"type": "plain_text", "text": "Go"}, "value": "1"},
                    {
                        "type": "overflow",
                        "action_id": "more",
                        "options": [_option("m"), _option("n")],
                    },
                ],
            }
        ]
    )
    button = payloads.action_item(find_element(blocks, text="Go"))
    assert button["type"] == "button" and button["value"] == "1" and button["action_id"]
    assert button["block_id"] == blocks[0]["block_id"]
    overflow = payloads.action_item(find_element(blocks, action_id="more"), "n")
    assert overflow["selected_option"] == _option("n")
