"""Walking Block Kit structures: their text, their interactive elements, Slack's default ids."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kandev_slack.kits.fakeslack.ids import short_block_id

JsonDict = dict[str, Any]

# Elements that carry an action_id (Slack generates one when the app leaves it out).
INTERACTIVE_TYPES = frozenset(
    {
        "button",
        "checkboxes",
        "datepicker",
        "datetimepicker",
        "timepicker",
        "email_text_input",
        "url_text_input",
        "number_input",
        "plain_text_input",
        "rich_text_input",
        "file_input",
        "overflow",
        "radio_buttons",
        "static_select",
        "external_select",
        "users_select",
        "conversations_select",
        "channels_select",
        "multi_static_select",
        "multi_external_select",
        "multi_users_select",
        "multi_conversations_select",
        "multi_channels_select",
        "workflow_button",
    }
)


@dataclass(frozen=True)
class ElementRef:
    """An interactive element and where it sits."""

    block: JsonDict
    element: JsonDict
    pointer: str

    @property
    def block_id(self) -> str:
        return str(self.block.get("block_id", ""))

    @property
    def action_id(self) -> str:
        return str(self.element.get("action_id", ""))

    @property
    def type(self) -> str:
        return str(self.element.get("type", ""))

    @property
    def label(self) -> str:
        text = self.element.get("text")
        return str(text.get("text", "")) if isinstance(text, dict) else ""


def blocks_text(blocks: list[JsonDict] | None) -> str:
    """Every human-readable string in `blocks` (text objects, rich text, markdown), in order."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            kind = node.get("type")
            text = node.get("text")
            if kind in ("plain_text", "mrkdwn", "text", "markdown") and isinstance(text, str):
                parts.append(text)
            for key, value in node.items():
                if key != "text" or not isinstance(value, str):
                    walk(value)

    walk(blocks or [])
    return "\n".join(parts)


def iter_elements(blocks: list[JsonDict], prefix: str = "/blocks") -> Iterator[ElementRef]:
    """Every element of `blocks` with the block holding it (actions, context, accessory, input)."""
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        base = f"{prefix}/{i}"
        elements = block.get("elements")
        if block.get("type") in ("actions", "context") and isinstance(elements, list):
            for j, element in enumerate(elements):
                if isinstance(element, dict):
                    yield ElementRef(block, element, f"{base}/elements/{j}")
        accessory = block.get("accessory")
        if isinstance(accessory, dict):
            yield ElementRef(block, accessory, f"{base}/accessory")
        element = block.get("element")
        if block.get("type") == "input" and isinstance(element, dict):
            yield ElementRef(block, element, f"{base}/element")


def assign_default_ids(blocks: list[JsonDict]) -> list[JsonDict]:
    """A copy of `blocks` with a block_id / action_id everywhere Slack would generate one."""
    out = copy.deepcopy(blocks)
    for block in out:
        if isinstance(block, dict) and not block.get("block_id"):
            block["block_id"] = short_block_id()
    for ref in iter_elements(out):
        if ref.element.get("type") in INTERACTIVE_TYPES and not ref.element.get("action_id"):
            ref.element["action_id"] = short_block_id()
    return out


def find_element(
    blocks: list[JsonDict],
    *,
    action_id: str | None = None,
    value: str | None = None,
    text: str | None = None,
    block_id: str | None = None,
    types: frozenset[str] | None = None,
) -> ElementRef:
    """The one element matching every given criterion; LookupError naming what exists."""
    candidates = [
        ref
        for ref in iter_elements(blocks)
        if ref.element.get("type") in (types or INTERACTIVE_TYPES)
    ]
    matches = [
        ref
        for ref in candidates
        if (action_id is None or ref.action_id == action_id)
        and (value is None or ref.element.get("value") == value)
        and (text is None or ref.label == text)
        and (block_id is None or ref.block_id == block_id)
    ]
    if len(matches) == 1:
        return matches[0]
    available = ", ".join(
        f"{r.type}(action_id={r.action_id!r}, value={r.element.get('value')!r}, text={r.label!r})"
        for r in candidates
    )
    wanted = f"action_id={action_id!r} value={value!r} text={text!r} block_id={block_id!r}"
    problem = "no element" if not matches else f"{len(matches)} elements"
    raise LookupError(f"{problem} matching {wanted}; available: {available or 'none'}")
