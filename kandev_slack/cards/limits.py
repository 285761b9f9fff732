"""Block Kit limits the renderers respect (Slack's documented ones and the text budget Slack
enforces on a whole message), and how we measure.

Slack documents its limits in "characters" without saying how it counts them. We measure in
UTF-16 code units (an emoji outside the BMP counts 2), which is never less than the number of
code points, so text that fits by our measure fits however Slack counts.
"""

from __future__ import annotations

from typing import Any

# Kandev's own limit for custom_text / reject_reason: its home is core (the use-cases check it).
from kandev_slack.core.limits import KANDEV_MAX_TEXT as KANDEV_MAX_TEXT

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
MAX_MESSAGE_TEXT = 4000  # top-level `text` fallback (Slack truncates longer text)
# Slack refuses a message whose blocks hold too much text altogether (`msg_blocks_too_long`,
# observed from about 13,000 characters, less with more blocks), although every block is within
# its own limit: the text of all of a message's blocks together stays within this.
MAX_MESSAGE_BLOCKS_TEXT = 11_000

MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_CONTEXT_TEXT = 3000  # per context element (same as a text object)
MAX_ACTIONS_ELEMENTS = 25

MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_URL = 3000
MAX_ACTION_ID = 255
MAX_BLOCK_ID = 255
MAX_CALLBACK_ID = 255

MAX_OPTION_TEXT = 75
MAX_OPTION_DESCRIPTION = 75
MAX_OPTION_VALUE = 150
MAX_RADIO_OPTIONS = 10
MAX_SELECT_OPTIONS = 100

MAX_INPUT_LABEL = 2000
MAX_INPUT_HINT = 2000
MAX_PLACEHOLDER = 150
MAX_TEXT_INPUT_LENGTH = 3000  # upper bound Slack accepts for plain_text_input.max_length

MAX_VIEW_TITLE = 24
MAX_VIEW_SUBMIT = 24
MAX_VIEW_CLOSE = 24
MAX_PRIVATE_METADATA = 3000


def char_units(ch: str) -> int:
    """How much one code point costs: 2 for characters outside the BMP (emoji), else 1."""
    return 2 if ord(ch) > 0xFFFF else 1


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
