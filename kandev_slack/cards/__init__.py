"""Pure rendering as Slack cards and modals, within Block Kit's limits: the kind-neutral
primitives (a kind's own renderers are in kandev_slack/kinds/<kind>/cards/).

Data in (Bundle, TaskInfo, CardState/CardOutcome, the public Kandev URL, ``now``), Block Kit
dicts and safe mrkdwn strings out. No I/O.
"""

from kandev_slack.cards.ids import (
    ACTION_ANSWER_MODAL,
    ACTION_ANSWER_OPTION,
    ACTION_CHOICE,
    ACTION_OPEN,
    ACTION_OPTION_PATTERN,
    ACTION_OTHER,
    ACTION_REASON,
    ACTION_REJECT,
    ACTION_TEXT,
    BLOCK_ACTIONS,
    BLOCK_REASON,
    CALLBACK_ANSWER,
    CALLBACK_OTHER,
    CALLBACK_REJECT,
    CALLBACK_RESULT,
    SHORTCUT_REJECT,
    ButtonValue,
    CodecError,
    ModalMetadata,
    ModalOrigin,
    choice_block_id,
    option_action_id,
    parse_button_value,
    parse_modal_metadata,
    text_block_id,
)
from kandev_slack.cards.mrkdwn import markdown_to_mrkdwn
from kandev_slack.cards.taskline import task_url
from kandev_slack.cards.text import escape_mrkdwn, fit_escaped, fit_plain, shorten_mrkdwn
from kandev_slack.cards.wording import answers_summary, outcome_line

__all__ = [
    "ACTION_ANSWER_MODAL",
    "ACTION_ANSWER_OPTION",
    "ACTION_CHOICE",
    "ACTION_OPEN",
    "ACTION_OPTION_PATTERN",
    "ACTION_OTHER",
    "ACTION_REASON",
    "ACTION_REJECT",
    "ACTION_TEXT",
    "BLOCK_ACTIONS",
    "BLOCK_REASON",
    "CALLBACK_ANSWER",
    "CALLBACK_OTHER",
    "CALLBACK_REJECT",
    "CALLBACK_RESULT",
    "SHORTCUT_REJECT",
    "ButtonValue",
    "CodecError",
    "ModalMetadata",
    "ModalOrigin",
    "answers_summary",
    "choice_block_id",
    "escape_mrkdwn",
    "fit_escaped",
    "fit_plain",
    "markdown_to_mrkdwn",
    "option_action_id",
    "outcome_line",
    "parse_button_value",
    "parse_modal_metadata",
    "shorten_mrkdwn",
    "task_url",
    "text_block_id",
]
