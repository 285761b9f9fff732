"""Pure rendering of Kandev bundles as Slack cards and modals, within Block Kit's limits.

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
from kandev_slack.cards.question.card import render_card
from kandev_slack.cards.question.fields import question_heading
from kandev_slack.cards.question.modals import (
    FormPlace,
    build_answer_modal,
    build_other_modal,
    build_reject_modal,
    build_result_modal,
    build_sending_modal,
    refill_form,
)
from kandev_slack.cards.question.submissions import parse_answer_submission, parse_reject_submission
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
    "FormPlace",
    "build_answer_modal",
    "build_other_modal",
    "build_reject_modal",
    "build_result_modal",
    "build_sending_modal",
    "choice_block_id",
    "escape_mrkdwn",
    "fit_escaped",
    "fit_plain",
    "markdown_to_mrkdwn",
    "refill_form",
    "option_action_id",
    "outcome_line",
    "parse_answer_submission",
    "parse_button_value",
    "parse_modal_metadata",
    "parse_reject_submission",
    "question_heading",
    "render_card",
    "shorten_mrkdwn",
    "task_url",
    "text_block_id",
]
