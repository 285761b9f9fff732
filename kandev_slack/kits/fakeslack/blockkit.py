"""Block Kit validation: slack_sdk.models plus the limits slack_sdk does not check.

Every blocks/view payload the app sends goes through here, and the cards' property tests use it
directly (tests/unit/cards/checks.py). Errors make the fake answer the way Slack does
(`invalid_blocks` / `invalid_arguments`); warnings (a missing `text` fallback, a fallback Slack
truncates) are recorded but the call succeeds, as on Slack.

Slack documents its limits in "characters" without saying how it counts: lengths here are UTF-16
code units (an emoji outside the BMP counts 2), never less than code points, so what passes fits
however Slack counts. Beyond slack_sdk and the documented limits: slack_sdk must give back exactly
the block that was sent (a misspelt key it drops is a key Slack refuses), texts are not blank,
``verbatim`` is for mrkdwn only, and the text of all of a message's blocks together stays within
``MESSAGE_BLOCKS_TEXT_MAX`` (Slack refuses more with `msg_blocks_too_long`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from kandev_slack.kits.fakeslack.layout import iter_elements
from kandev_slack.kits.fakeslack.records import Violation

JsonDict = dict[str, Any]
Surface = Literal["message", "modal", "home"]

MAX_BLOCKS = {"message": 50, "modal": 100, "home": 100}
MESSAGE_TEXT_MAX = 40_000
# Slack truncates a longer top-level `text` fallback (what notifications show): a warning.
MESSAGE_TEXT_FALLBACK_MAX = 4_000
# Slack refuses a message whose blocks hold too much text altogether (`msg_blocks_too_long`,
# observed from about 13,000 characters, less with more blocks), although every block is within
# its own limit; the bot keeps within 11,000 (kandev_slack/cards/limits.py MAX_MESSAGE_BLOCKS_TEXT).
MESSAGE_BLOCKS_TEXT_MAX = 11_000
OPTION_LIMITS = {
    "radio_buttons": (1, 10),
    "checkboxes": (1, 10),
    "overflow": (2, 5),
    "static_select": (1, 100),
    "multi_static_select": (1, 100),
}


class _Checker:
    """Collects violations for one API call."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.found: list[Violation] = []

    def error(self, pointer: str, message: str) -> None:
        self.found.append(Violation(self.method, pointer, message, "error"))

    def warning(self, pointer: str, message: str) -> None:
        self.found.append(Violation(self.method, pointer, message, "warning"))

    def max_len(self, value: Any, limit: int, pointer: str) -> None:
        if isinstance(value, str) and slack_len(value) > limit:
            self.error(
                pointer, f"must be less than {limit + 1} characters (got {slack_len(value)})"
            )

    def text_object(
        self,
        obj: Any,
        pointer: str,
        limit: int,
        *,
        plain_only: bool = False,
        required: bool = True,
    ) -> None:
        if obj is None:
            if required:
                self.error(pointer, "text object is required")
            return
        if not isinstance(obj, dict) or obj.get("type") not in ("plain_text", "mrkdwn"):
            self.error(pointer, "must be a text object (plain_text or mrkdwn)")
            return
        if plain_only and obj.get("type") != "plain_text":
            self.error(f"{pointer}/type", "must be plain_text")
        if obj.get("type") == "plain_text" and "verbatim" in obj:
            self.error(f"{pointer}/verbatim", "verbatim is only for mrkdwn")
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            self.error(f"{pointer}/text", "must be more than 0 characters")
            return
        self.max_len(text, limit, f"{pointer}/text")


def slack_len(text: str) -> int:
    """Length as UTF-16 code units: an upper bound on any way Slack may count characters."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def blocks_text_length(blocks: Any) -> int:
    """The length of every text object (mrkdwn and plain_text) in ``blocks``, together."""
    if isinstance(blocks, list):
        return sum(blocks_text_length(b) for b in blocks)
    if not isinstance(blocks, dict):
        return 0
    total = 0
    if blocks.get("type") in ("mrkdwn", "plain_text") and isinstance(blocks.get("text"), str):
        total += slack_len(blocks["text"])
    return total + sum(blocks_text_length(v) for v in blocks.values() if not isinstance(v, str))


def _sdk_block_errors(check: _Checker, blocks: list[Any], prefix: str) -> None:
    for i, raw in enumerate(blocks):
        pointer = f"{prefix}/{i}"
        try:
            parsed = Block.parse(raw)
            if parsed is None:
                check.error(pointer, f"unknown block type {raw.get('type')!r}")
                continue
            back = json.loads(json.dumps(parsed.to_dict()))
            if back != raw:
                check.error(pointer, f"slack_sdk gives back another block (a key unknown?): {back}")
        except SlackObjectFormationError as exc:
            check.error(pointer, f"slack_sdk: {exc}")
        except Exception as exc:  # malformed structure slack_sdk cannot even build
            check.error(pointer, f"slack_sdk could not parse the block: {exc!r}")


def _check_confirm(check: _Checker, confirm: Any, pointer: str) -> None:
    if confirm is None:
        return
    if not isinstance(confirm, dict):
        check.error(pointer, "must be a confirmation dialog object")
        return
    check.text_object(confirm.get("title"), f"{pointer}/title", 100, plain_only=True)
    check.text_object(confirm.get("text"), f"{pointer}/text", 300)
    check.text_object(confirm.get("confirm"), f"{pointer}/confirm", 30, plain_only=True)
    check.text_object(confirm.get("deny"), f"{pointer}/deny", 30, plain_only=True)


def _check_options(check: _Checker, element: JsonDict, pointer: str) -> None:
    kind = element.get("type", "")
    options = element.get("options")
    groups = element.get("option_groups")
    low, high = OPTION_LIMITS[kind]
    all_options: list[tuple[str, Any]] = []
    if isinstance(options, list):
        if not low <= len(options) <= high:
            check.error(
                f"{pointer}/options",
                f"{kind} must have between {low} and {high} options (got {len(options)})",
            )
        all_options += [(f"{pointer}/options/{i}", o) for i, o in enumerate(options)]
    elif options is not None:
        check.error(f"{pointer}/options", "must be an array")
    if isinstance(groups, list):
        if len(groups) > 100:
            check.error(f"{pointer}/option_groups", "must have at most 100 option groups")
        for g, group in enumerate(groups):
            gp = f"{pointer}/option_groups/{g}"
            check.text_object(group.get("label"), f"{gp}/label", 75, plain_only=True)
            group_options = group.get("options") or []
            if len(group_options) > 100:
                check.error(f"{gp}/options", "must have at most 100 options")
            all_options += [(f"{gp}/options/{i}", o) for i, o in enumerate(group_options)]
    elif kind in ("static_select", "multi_static_select") and options is None:
        check.error(pointer, "options or option_groups is required")
    values: set[str] = set()
    for op, option in all_options:
        if not isinstance(option, dict):
            check.error(op, "must be an option object")
            continue
        check.text_object(option.get("text"), f"{op}/text", 75)
        check.text_object(option.get("description"), f"{op}/description", 75, required=False)
        value = option.get("value")
        if not isinstance(value, str) or not value:
            check.error(f"{op}/value", "must be a non-empty string")
        else:
            check.max_len(value, 150, f"{op}/value")
            if value in values:
                check.error(f"{op}/value", f"duplicate option value {value!r}")
            values.add(value)


def _check_element(check: _Checker, element: JsonDict, pointer: str) -> None:
    kind = element.get("type")
    check.max_len(element.get("action_id"), 255, f"{pointer}/action_id")
    if "placeholder" in element:
        check.text_object(element["placeholder"], f"{pointer}/placeholder", 150, plain_only=True)
    _check_confirm(check, element.get("confirm"), f"{pointer}/confirm")
    if kind == "button":
        check.text_object(element.get("text"), f"{pointer}/text", 75, plain_only=True)
        check.max_len(element.get("value"), 2000, f"{pointer}/value")
        check.max_len(element.get("url"), 3000, f"{pointer}/url")
        if element.get("style") not in (None, "primary", "danger"):
            check.error(f"{pointer}/style", "must be primary or danger")
    elif kind in OPTION_LIMITS:
        _check_options(check, element, pointer)
    elif kind == "plain_text_input":
        max_length = element.get("max_length")
        min_length = element.get("min_length")
        for name, bound, low in (("max_length", max_length, 1), ("min_length", min_length, 0)):
            if bound is not None and (not isinstance(bound, int) or not low <= bound <= 3000):
                check.error(f"{pointer}/{name}", f"{name} must be an integer from {low} to 3000")
        if isinstance(max_length, int) and isinstance(min_length, int) and min_length > max_length:
            check.error(f"{pointer}/min_length", "min_length must not exceed max_length")
        initial = element.get("initial_value")
        # max_length bounds what a person types (code points, as Kandev counts), not UTF-16
        if isinstance(initial, str) and isinstance(max_length, int) and len(initial) > max_length:
            check.error(f"{pointer}/initial_value", "initial_value is longer than max_length")


def _check_block(check: _Checker, block: JsonDict, pointer: str) -> None:
    kind = block.get("type")
    if kind == "header":
        check.text_object(block.get("text"), f"{pointer}/text", 150, plain_only=True)
    elif kind == "section":
        if block.get("text") is None and not block.get("fields"):
            check.error(pointer, "section needs text or fields")
        if block.get("text") is not None:
            check.text_object(block["text"], f"{pointer}/text", 3000)
        fields = block.get("fields")
        if fields is not None:
            if not isinstance(fields, list) or len(fields) > 10:
                check.error(f"{pointer}/fields", "must be an array of at most 10 items")
            else:
                for i, field in enumerate(fields):
                    check.text_object(field, f"{pointer}/fields/{i}", 2000)
    elif kind in ("context", "actions"):
        elements = block.get("elements")
        limit = 10 if kind == "context" else 25
        if not isinstance(elements, list) or not 1 <= len(elements) <= limit:
            count = len(elements) if isinstance(elements, list) else "none"
            check.error(f"{pointer}/elements", f"{kind} needs 1 to {limit} elements ({count})")
        if kind == "context" and isinstance(elements, list):
            for i, element in enumerate(elements):
                if isinstance(element, dict) and element.get("type") in ("plain_text", "mrkdwn"):
                    check.text_object(element, f"{pointer}/elements/{i}", 3000)
    elif kind == "input":
        check.text_object(block.get("label"), f"{pointer}/label", 2000, plain_only=True)
        check.text_object(block.get("hint"), f"{pointer}/hint", 2000, required=False)
        if not isinstance(block.get("element"), dict):
            check.error(f"{pointer}/element", "input needs an element")


def _check_blocks(check: _Checker, blocks: Any, prefix: str, surface: Surface) -> None:
    if not isinstance(blocks, list):
        check.error(prefix, "blocks must be an array")
        return
    limit = MAX_BLOCKS[surface]
    if len(blocks) > limit:
        check.error(prefix, f"no more than {limit} items allowed (got {len(blocks)})")
    _sdk_block_errors(check, blocks, prefix)
    seen_block_ids: set[str] = set()
    for i, block in enumerate(blocks):
        pointer = f"{prefix}/{i}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            check.error(pointer, "a block must be an object with a type")
            continue
        block_id = block.get("block_id")
        if block_id is not None:
            if not isinstance(block_id, str) or not block_id:
                check.error(f"{pointer}/block_id", "block_id must be a non-empty string")
            else:
                check.max_len(block_id, 255, f"{pointer}/block_id")
                if block_id in seen_block_ids:
                    check.error(f"{pointer}/block_id", f"duplicate block_id {block_id!r}")
                seen_block_ids.add(block_id)
        _check_block(check, block, pointer)
    seen_action_ids: dict[int, set[str]] = {}
    for ref in iter_elements(blocks, prefix=prefix):
        _check_element(check, ref.element, ref.pointer)
        action_id = ref.element.get("action_id")
        if isinstance(action_id, str):
            in_block = seen_action_ids.setdefault(id(ref.block), set())
            if action_id in in_block:
                check.error(f"{ref.pointer}/action_id", f"duplicate action_id {action_id!r}")
            in_block.add(action_id)


def validate_message(
    method: str, text: Any, blocks: Any, *, require_text_fallback: bool = True
) -> list[Violation]:
    """Violations of a message payload (chat.postMessage/update/postEphemeral, response_url)."""
    check = _Checker(method)
    if isinstance(text, str) and slack_len(text) > MESSAGE_TEXT_MAX:
        check.error("/text", f"text must be less than {MESSAGE_TEXT_MAX + 1} characters")
    elif isinstance(text, str) and slack_len(text) > MESSAGE_TEXT_FALLBACK_MAX:
        limit = MESSAGE_TEXT_FALLBACK_MAX
        check.warning("/text", f"text over {limit} characters is truncated ({slack_len(text)})")
    if blocks is None:
        return check.found
    _check_blocks(check, blocks, "/blocks", "message")
    together = blocks_text_length(blocks)
    if together > MESSAGE_BLOCKS_TEXT_MAX:
        check.error(
            "/blocks",
            f"msg_blocks_too_long: the blocks hold {together} characters of text altogether "
            f"(at most {MESSAGE_BLOCKS_TEXT_MAX})",
        )
    if require_text_fallback and blocks and not (isinstance(text, str) and text.strip()):
        check.warning("/text", "top-level text fallback is missing while blocks are sent")
    return check.found


def validate_view(method: str, view: Any) -> list[Violation]:
    """Violations of a view payload (views.open/update/push/publish, response_action views)."""
    check = _Checker(method)
    if not isinstance(view, dict):
        check.error("/view", "view must be a JSON object")
        return check.found
    kind = view.get("type")
    if kind not in ("modal", "home"):
        check.error("/view/type", "type must be modal or home")
        return check.found
    surface: Surface = "modal" if kind == "modal" else "home"
    block_errors = len(check.found)
    _check_blocks(check, view.get("blocks"), "/view/blocks", surface)
    sdk_block_messages = {v.message for v in check.found[block_errors:]}
    if kind == "modal":
        check.text_object(view.get("title"), "/view/title", 24, plain_only=True)
        check.text_object(view.get("submit"), "/view/submit", 24, plain_only=True, required=False)
        check.text_object(view.get("close"), "/view/close", 24, plain_only=True, required=False)
        raw_blocks = view.get("blocks")
        blocks: list[Any] = raw_blocks if isinstance(raw_blocks, list) else []
        has_input = any(isinstance(b, dict) and b.get("type") == "input" for b in blocks)
        if has_input and view.get("submit") is None:
            check.error("/view/submit", "a modal with input blocks needs a submit button")
    else:
        for key in ("submit", "close"):
            if view.get(key) is not None:
                check.error(f"/view/{key}", f"a home view cannot have {key}")
    check.max_len(view.get("private_metadata"), 3000, "/view/private_metadata")
    check.max_len(view.get("callback_id"), 255, "/view/callback_id")
    check.max_len(view.get("external_id"), 255, "/view/external_id")
    try:
        View(**view).to_dict()
    except SlackObjectFormationError as exc:
        message = f"slack_sdk: {exc}"
        if message not in sdk_block_messages:
            check.error("/view", message)
    except Exception as exc:
        check.error("/view", f"slack_sdk could not parse the view: {exc!r}")
    return check.found


def slack_error_messages(violations: list[Violation]) -> list[str]:
    """`response_metadata.messages` as Slack words them."""
    return [f"[ERROR] {v.message} [json-pointer:{v.pointer}]" for v in violations]
