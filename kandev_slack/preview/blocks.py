"""Block Kit → HTML, as Slack's client lays it out closely enough to judge a design.

Every text goes through :mod:`kandev_slack.preview.mrkdwn` (mrkdwn) or :func:`plain_to_html`
(plain_text),
every attribute value through ``html.escape``: a payload cannot add markup of its own.
Interactive elements carry ``data-*`` attributes the page's script turns into interactions
(``data-act="click"`` on buttons, ``"select"`` on menus outside forms); inside a form (a
modal's input blocks) they are named ``<block_id>/<action_id>`` and read on submit. Images are
shown by their alt text: the preview loads nothing from outside the machine.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from kandev_slack.preview.mrkdwn import Names, plain_to_html, to_html

JsonDict = dict[str, Any]
BUTTON_STYLES = frozenset({"primary", "danger"})
#: Select-like elements whose choice is sent at once when they sit outside an input block.
MENUS = frozenset({"static_select", "overflow", "radio_buttons", "checkboxes"})


@dataclass(frozen=True)
class Look:
    """How to render: mention names, the viewer's time zone, the field errors of a modal
    (block_id → mrkdwn) and what the viewer already typed (``block/action`` → values)."""

    names: Names = field(default_factory=dict)
    tz: tzinfo | None = None
    errors: dict[str, str] = field(default_factory=dict)


def attr(value: object) -> str:
    return html.escape(str(value), quote=True)


def text_html(obj: Any, look: Look) -> str:
    """A text object (``plain_text`` or ``mrkdwn``); anything else shows nothing."""
    if not isinstance(obj, dict):
        return ""
    text = str(obj.get("text", ""))
    if obj.get("type") == "mrkdwn":
        return to_html(text, names=look.names, tz=look.tz)
    return plain_to_html(text)


def render_blocks(blocks: Any, look: Look) -> str:
    if not isinstance(blocks, list):
        return ""
    return "".join(render_block(b, look) for b in blocks if isinstance(b, dict))


def render_block(block: JsonDict, look: Look) -> str:
    kind = str(block.get("type", ""))
    render = _BLOCKS.get(kind)
    inner = render(block, look) if render else _unsupported(kind)
    block_id = attr(block.get("block_id", ""))
    return f'<div class="block block-{attr(kind)}" data-block-id="{block_id}">{inner}</div>'


def _unsupported(kind: str) -> str:
    return f'<div class="unsupported">(a "{attr(kind)}" block: not shown by the preview)</div>'


def _section(block: JsonDict, look: Look) -> str:
    parts = []
    if block.get("text"):
        parts.append(f'<div class="section-text">{text_html(block["text"], look)}</div>')
    fields = block.get("fields")
    if isinstance(fields, list) and fields:
        cells = "".join(f'<div class="field">{text_html(f, look)}</div>' for f in fields)
        parts.append(f'<div class="fields">{cells}</div>')
    body = f'<div class="section-body">{"".join(parts)}</div>'
    accessory = block.get("accessory")
    if isinstance(accessory, dict):
        body += f'<div class="accessory">{render_element(accessory, block, look)}</div>'
    return body


def _header(block: JsonDict, look: Look) -> str:
    return f'<h3 class="header">{text_html(block.get("text"), look)}</h3>'


def _divider(block: JsonDict, look: Look) -> str:
    return "<hr>"


def _context(block: JsonDict, look: Look) -> str:
    elements = _list(block.get("elements"))
    shown = []
    for element in elements:
        if isinstance(element, dict) and element.get("type") == "image":
            shown.append(_image_alt(element))
        else:
            shown.append(f"<span>{text_html(element, look)}</span>")
    return f'<div class="context">{"".join(shown)}</div>'


def _actions(block: JsonDict, look: Look) -> str:
    elements = _list(block.get("elements"))
    shown = "".join(render_element(e, block, look) for e in elements if isinstance(e, dict))
    return f'<div class="actions">{shown}</div>'


def _image(block: JsonDict, look: Look) -> str:
    title = text_html(block.get("title"), look)
    return f'<div class="image">{_image_alt(block)}{title}</div>'


def _image_alt(element: JsonDict) -> str:
    return f'<span class="image-alt">[image: {attr(element.get("alt_text", ""))}]</span>'


def _input(block: JsonDict, look: Look) -> str:
    block_id = str(block.get("block_id", ""))
    optional = ' <span class="optional">(optional)</span>' if block.get("optional") else ""
    label = f'<label class="input-label">{text_html(block.get("label"), look)}{optional}</label>'
    element = block.get("element")
    control = (
        render_element(element, block, look, in_form=True) if isinstance(element, dict) else ""
    )
    hint = block.get("hint")
    hint_html = f'<div class="hint">{text_html(hint, look)}</div>' if hint else ""
    error = look.errors.get(block_id)
    error_html = ""
    if error:
        shown = to_html(error, names=look.names, tz=look.tz)
        error_html = f'<div class="field-error" role="alert">{shown}</div>'
    return f"{label}{control}{hint_html}{error_html}"


def _rich_text(block: JsonDict, look: Look) -> str:
    """Rich text shown by its words (sections, lists, quotes, preformatted as lines)."""
    lines = []
    for part in block.get("elements") or []:
        if isinstance(part, dict):
            words = "".join(
                html.escape(str(e.get("text", "")), quote=True)
                for e in part.get("elements") or []
                if isinstance(e, dict)
            )
            lines.append(f"<div>{words}</div>")
    return f'<div class="rich-text">{"".join(lines)}</div>'


_BLOCKS: dict[str, Callable[[JsonDict, Look], str]] = {
    "section": _section,
    "header": _header,
    "divider": _divider,
    "context": _context,
    "actions": _actions,
    "image": _image,
    "input": _input,
    "rich_text": _rich_text,
}


# ---- elements ---------------------------------------------------------------------------------
def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _ids(element: JsonDict, block: JsonDict) -> str:
    return (
        f'data-action-id="{attr(element.get("action_id", ""))}" '
        f'data-block-id="{attr(block.get("block_id", ""))}"'
    )


def render_element(element: JsonDict, block: JsonDict, look: Look, *, in_form: bool = False) -> str:
    kind = str(element.get("type", ""))
    if kind == "button":
        return _button(element, block, look)
    if kind == "image":
        return _image_alt(element)
    if kind == "overflow":
        return _select(element, block, look, placeholder="⋯", css="overflow", in_form=in_form)
    if kind == "static_select":
        placeholder = text_html(element.get("placeholder"), look) or "Select an item"
        return _select(element, block, look, placeholder=placeholder, in_form=in_form)
    if kind in ("radio_buttons", "checkboxes"):
        return _choices(element, block, look, in_form=in_form)
    if kind == "plain_text_input":
        return _text_input(element, block, look)
    return f'<span class="unsupported">(a "{attr(kind)}" element)</span>'


def _button(element: JsonDict, block: JsonDict, look: Look) -> str:
    style = element.get("style")
    css = f"btn btn-{style}" if style in BUTTON_STYLES else "btn"
    label = text_html(element.get("text"), look)
    url = str(element.get("url", ""))
    if url.startswith(("http://", "https://")):
        return (
            f'<a class="{css}" href="{attr(url)}" target="_blank" rel="noopener noreferrer" '
            f'{_ids(element, block)} data-act="click" data-value="{attr(element.get("value", ""))}"'
            f">{label}</a>"
        )
    confirm = element.get("confirm")
    confirm_attr = ""
    if isinstance(confirm, dict):
        dialog = {
            "title": text_html(confirm.get("title"), look),
            "text": text_html(confirm.get("text"), look),
            "confirm": text_html(confirm.get("confirm"), look) or "Yes",
            "deny": text_html(confirm.get("deny"), look) or "Cancel",
        }
        confirm_attr = f' data-confirm="{attr(json.dumps(dialog))}"'
    return (
        f'<button type="button" class="{css}" {_ids(element, block)} data-act="click" '
        f'data-value="{attr(element.get("value", ""))}"{confirm_attr}>{label}</button>'
    )


def _options(element: JsonDict) -> list[JsonDict]:
    options = [o for o in element.get("options") or [] if isinstance(o, dict)]
    for group in element.get("option_groups") or []:
        if isinstance(group, dict):
            options += [o for o in group.get("options") or [] if isinstance(o, dict)]
    return options


def _initial_values(element: JsonDict) -> set[str]:
    initial = element.get("initial_option")
    chosen = [initial] if isinstance(initial, dict) else list(element.get("initial_options") or [])
    return {str(o.get("value", "")) for o in chosen if isinstance(o, dict)}


def _select(
    element: JsonDict,
    block: JsonDict,
    look: Look,
    *,
    placeholder: str,
    css: str = "select",
    in_form: bool,
) -> str:
    chosen = _initial_values(element)
    options = "".join(
        f'<option value="{attr(o.get("value", ""))}"'
        f"{' selected' if str(o.get('value', '')) in chosen else ''}>"
        f"{text_html(o.get('text'), look)}</option>"
        for o in _options(element)
    )
    selected = "" if chosen else " selected"
    first = f'<option value="" disabled{selected}>{placeholder}</option>'
    if in_form:
        name = f"{block.get('block_id', '')}/{element.get('action_id', '')}"
        return f'<select class="{css}" name="{attr(name)}">{first}{options}</select>'
    return (
        f'<select class="{css}" {_ids(element, block)} data-act="select">{first}{options}</select>'
    )


def _choices(element: JsonDict, block: JsonDict, look: Look, *, in_form: bool) -> str:
    kind = "radio" if element.get("type") == "radio_buttons" else "checkbox"
    name = f"{block.get('block_id', '')}/{element.get('action_id', '')}"
    chosen = _initial_values(element)
    act = "" if in_form else f' {_ids(element, block)} data-act="select"'
    if in_form and block.get("dispatch_action"):  # Slack sends such a pick at once
        act = f' {_ids(element, block)} data-act="pick"'
    rows = []
    for option in _options(element):
        value = str(option.get("value", ""))
        checked = " checked" if value in chosen else ""
        description = option.get("description")
        extra = f'<div class="option-description">{text_html(description, look)}</div>'
        rows.append(
            f'<label class="choice"><input type="{kind}" name="{attr(name)}" '
            f'value="{attr(value)}"{checked}{act}><span>{text_html(option.get("text"), look)}'
            f"{extra if description else ''}</span></label>"
        )
    return f'<div class="choices">{"".join(rows)}</div>'


def _text_input(element: JsonDict, block: JsonDict, look: Look) -> str:
    name = attr(f"{block.get('block_id', '')}/{element.get('action_id', '')}")
    shown = element.get("placeholder")
    placeholder = attr(shown.get("text", "")) if isinstance(shown, dict) else ""
    limits = ""
    if isinstance(element.get("max_length"), int):
        limits += f' maxlength="{element["max_length"]}"'
    if isinstance(element.get("min_length"), int):
        limits += f' minlength="{element["min_length"]}"'
    initial = str(element.get("initial_value", ""))
    if element.get("multiline"):
        return (
            f'<textarea name="{name}" rows="3" placeholder="{placeholder}"{limits}>'
            f"{html.escape(initial)}</textarea>"
        )
    return (
        f'<input type="text" name="{name}" placeholder="{placeholder}" '
        f'value="{attr(initial)}"{limits}>'
    )
