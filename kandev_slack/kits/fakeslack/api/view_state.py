"""`view.state.values` as Slack builds it on submit, including what Slack's client enforces
before it lets a person submit (required inputs, min/max length)."""

from __future__ import annotations

import copy
from typing import Any

from kandev_slack.kits.fakeslack.layout import ElementRef, iter_elements

JsonDict = dict[str, Any]

# element type -> the key holding its value in state.values, and the empty value
STATE_KEYS: dict[str, tuple[str, Any]] = {
    "plain_text_input": ("value", None),
    "email_text_input": ("value", None),
    "url_text_input": ("value", None),
    "number_input": ("value", None),
    "rich_text_input": ("rich_text_value", None),
    "radio_buttons": ("selected_option", None),
    "static_select": ("selected_option", None),
    "external_select": ("selected_option", None),
    "checkboxes": ("selected_options", []),
    "multi_static_select": ("selected_options", []),
    "users_select": ("selected_user", None),
    "multi_users_select": ("selected_users", []),
    "conversations_select": ("selected_conversation", None),
    "multi_conversations_select": ("selected_conversations", []),
    "channels_select": ("selected_channel", None),
    "multi_channels_select": ("selected_channels", []),
    "datepicker": ("selected_date", None),
    "timepicker": ("selected_time", None),
}
INITIAL_KEYS = {
    "value": "initial_value",
    "selected_option": "initial_option",
    "selected_options": "initial_options",
    "selected_user": "initial_user",
    "selected_users": "initial_users",
    "selected_conversation": "initial_conversation",
    "selected_conversations": "initial_conversations",
    "selected_channel": "initial_channel",
    "selected_channels": "initial_channels",
    "selected_date": "initial_date",
    "selected_time": "initial_time",
}


class ViewSubmissionBlocked(ValueError):
    """Slack's client would refuse this submission (a required field is empty, text too long…)."""


def element_options(element: JsonDict) -> list[JsonDict]:
    options = list(element.get("options") or [])
    for group in element.get("option_groups") or []:
        options += group.get("options") or []
    return options


def option_by_value(element: JsonDict, value: str) -> JsonDict:
    for option in element_options(element):
        if option.get("value") == value:
            return copy.deepcopy(option)
    known = [o.get("value") for o in element_options(element)]
    raise LookupError(f"{element.get('action_id')!r} has no option {value!r} (has {known})")


def to_state(element: JsonDict, value: Any) -> JsonDict:
    """Turn a convenient test value into Slack's state entry for `element`.

    A dict with a "type" is taken as a complete state entry. Otherwise: text inputs take a str,
    single selects / radio buttons take an option value, checkboxes / multi selects a list of
    option values, user / channel / conversation selects ids, pickers their string values.
    """
    kind = str(element.get("type"))
    if isinstance(value, dict) and "type" in value:
        return copy.deepcopy(value)
    key, _empty = STATE_KEYS[kind]
    entry: JsonDict = {"type": kind}
    if key == "selected_option":
        entry[key] = None if value is None else option_by_value(element, str(value))
    elif key == "selected_options":
        entry[key] = [option_by_value(element, str(v)) for v in (value or [])]
    else:
        entry[key] = value
    return entry


def _initial(element: JsonDict) -> JsonDict:
    kind = str(element.get("type"))
    key, empty = STATE_KEYS[kind]
    initial = element.get(INITIAL_KEYS.get(key, ""), empty)
    return {"type": kind, key: copy.deepcopy(initial)}


def _is_empty(entry: JsonDict) -> bool:
    values = [v for k, v in entry.items() if k != "type"]
    return all(v in (None, "", []) for v in values)


def _check_entry(ref: ElementRef, entry: JsonDict) -> None:
    optional = bool(ref.block.get("optional", False))
    if ref.block.get("type") == "input" and not optional and _is_empty(entry):
        raise ViewSubmissionBlocked(
            f"block {ref.block_id!r} is required but empty (Slack would not submit)"
        )
    value = entry.get("value")
    if ref.type == "plain_text_input" and isinstance(value, str):
        max_length, min_length = ref.element.get("max_length"), ref.element.get("min_length")
        if isinstance(max_length, int) and len(value) > max_length:
            raise ViewSubmissionBlocked(
                f"{ref.block_id!r}: {len(value)} characters exceed max_length {max_length}"
            )
        if isinstance(min_length, int) and 0 < len(value) < min_length:
            raise ViewSubmissionBlocked(
                f"{ref.block_id!r}: {len(value)} characters are fewer than min_length {min_length}"
            )


def build_state_values(
    blocks: list[JsonDict],
    values: dict[str, dict[str, Any]] | None,
    *,
    enforce_client_rules: bool = True,
) -> dict[str, dict[str, JsonDict]]:
    """state.values for a submission of `blocks` with `values` ({block_id: {action_id: v}})."""
    refs = [ref for ref in iter_elements(blocks) if ref.type in STATE_KEYS]
    by_key = {(ref.block_id, ref.action_id): ref for ref in refs}
    state: dict[str, dict[str, JsonDict]] = {}
    for ref in refs:
        state.setdefault(ref.block_id, {})[ref.action_id] = _initial(ref.element)
    for block_id, actions in (values or {}).items():
        for action_id, value in actions.items():
            found = by_key.get((block_id, action_id))
            if found is None:
                known = sorted(f"{b}/{a}" for b, a in by_key)
                raise KeyError(f"no input {block_id}/{action_id} in the view (has {known})")
            state[block_id][action_id] = to_state(found.element, value)
    if enforce_client_rules:
        for ref in refs:
            _check_entry(ref, state[ref.block_id][ref.action_id])
    return state


def kept_entries(
    entered: dict[str, dict[str, Any]], blocks: list[JsonDict]
) -> dict[str, dict[str, Any]]:
    """What Slack keeps of a person's entries when the app replaces the view (``views.update``):
    those of inputs whose block_id and action_id the new ``blocks`` still have."""
    present = {(ref.block_id, ref.action_id) for ref in iter_elements(blocks)}
    kept: dict[str, dict[str, Any]] = {}
    for block_id, actions in entered.items():
        for action_id, value in actions.items():
            if (block_id, action_id) in present:
                kept.setdefault(block_id, {})[action_id] = value
    return kept


def merged_entries(
    entered: dict[str, dict[str, Any]], values: dict[str, dict[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """``entered`` with ``values`` on top (a later entry replaces an earlier one)."""
    merged = {block_id: dict(actions) for block_id, actions in entered.items()}
    for block_id, actions in (values or {}).items():
        merged.setdefault(block_id, {}).update(actions)
    return merged
