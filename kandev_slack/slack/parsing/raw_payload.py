"""Reading a payload defensively: who, where and what, from a body that may be malformed.

Used when a payload cannot be parsed into its typed model (kandev_slack/slack/parsing/payloads.py)
but the
person should still be told why nothing happened. Nothing here trusts the payload's shape:
every field is checked before it is used.
"""

from __future__ import annotations

from typing import Any

#: Longest piece of a payload quoted in a log line or an audit entry.
_QUOTE = 120


def quote(value: Any, limit: int = _QUOTE) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def str_or_empty(value: Any) -> str:
    """``value`` if it is a string, else an empty one."""
    return _str(value)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def obj_at(value: Any, key: str) -> dict[str, Any]:
    """``value[key]`` if both are objects, else an empty one."""
    return _obj(_obj(value).get(key))


def user_of(body: Any) -> str:
    """The acting user's id, if the payload has a usable one."""
    body = _obj(body)
    return _str(_obj(body.get("user")).get("id")) or _str(body.get("user_id"))


def channel_of(body: Any) -> str:
    body = _obj(body)
    return (
        _str(_obj(body.get("container")).get("channel_id"))
        or _str(_obj(body.get("channel")).get("id"))
        or _str(body.get("channel_id"))
    )


def response_url_of(body: Any) -> str:
    return _str(_obj(body).get("response_url"))


def action_id_of(body: Any) -> str:
    actions = _obj(body).get("actions")
    first = actions[0] if isinstance(actions, list) and actions else {}
    return _str(_obj(first).get("action_id"))


def input_block_ids(body: Any) -> list[str]:
    """The block ids of the submitted view's input blocks (where a field error can be shown)."""
    blocks = _obj(_obj(body).get("view")).get("blocks")
    if not isinstance(blocks, list):
        return []
    return [
        b["block_id"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "input" and isinstance(b.get("block_id"), str)
    ]


#: The parts of a submitted view that make a view again (``views.update`` takes no others).
_VIEW_KEYS = (
    "type",
    "callback_id",
    "title",
    "submit",
    "close",
    "blocks",
    "private_metadata",
    "clear_on_close",
    "notify_on_close",
)


def view_id_of(body: Any) -> str:
    """The submitted view's id (to replace it with ``views.update``)."""
    return _str(_obj(_obj(body).get("view")).get("id"))


def submitted_view(body: Any) -> dict[str, Any] | None:
    """The submitted view as a view definition (None when it has no blocks to show again)."""
    view = _obj(_obj(body).get("view"))
    if not isinstance(view.get("blocks"), list):
        return None
    return {key: view[key] for key in _VIEW_KEYS if key in view}


def state_values(body: Any) -> dict[str, Any]:
    """What the person entered in the submitted view (``view.state.values``)."""
    return _obj(_obj(_obj(_obj(body).get("view")).get("state")).get("values"))
