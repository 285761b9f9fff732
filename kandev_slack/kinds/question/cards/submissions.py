"""Reading a submitted answer / other / reject modal: the answers or the reason, or field
errors that keep the modal open (``response_action: errors``) for what Kandev would refuse."""

from __future__ import annotations

from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.ids import CodecError
from kandev_slack.cards.limits import KANDEV_MAX_TEXT
from kandev_slack.cards.text import fit_plain
from kandev_slack.core.clarification import Answer, Bundle
from kandev_slack.kinds.question.cards.fields import question_heading

StateValues = dict[str, dict[str, dict[str, Any]]]
Errors = dict[str, str]

MISSING_ANSWER = "Pick an option or write an answer"
UNKNOWN_OPTION = "That option is not part of this question; pick one of the options shown"
MISSING_REASON = "Write a reason: the agent reads it"
MISSING_OTHER = "Write your answer: you picked Other"


def _too_long(what: str, length: int) -> str:
    return f"{what} is {length:,} characters; Kandev accepts at most {KANDEV_MAX_TEXT:,}"


def _state(values: StateValues, block_id: str, action_id: str) -> dict[str, Any] | None:
    block = values.get(block_id)
    return block.get(action_id) if isinstance(block, dict) else None


def parse_answer_submission(bundle: Bundle, state_values: StateValues) -> list[Answer] | Errors:
    """The answers of an answer/other modal submission, in the bundle's question order, or
    field errors keyed by the block_id of the offending input."""
    errors: Errors = {}
    answers: list[Answer] = []
    missing: list[str] = []
    for index, question in enumerate(bundle.questions):
        choice_id = ids.choice_block_id(index, question)
        text_id = ids.text_block_id(index, question)
        if choice_id not in state_values and text_id not in state_values:
            missing.append(question_heading(index, len(bundle.questions), question))
            continue
        selected = (_state(state_values, choice_id, ids.ACTION_CHOICE) or {}).get("selected_option")
        option_id = None
        other = str((selected or {}).get("value") or "") == ids.OTHER_VALUE
        if selected and not other:
            option_id = ids.option_from_value(question, str(selected.get("value") or ""))
            if option_id is None:
                errors[choice_id] = UNKNOWN_OPTION
                continue
        text = str((_state(state_values, text_id, ids.ACTION_TEXT) or {}).get("value") or "")
        text = text.strip()
        if len(text) > KANDEV_MAX_TEXT:
            errors[text_id] = _too_long("Your answer", len(text))
        elif option_id is None and not text:
            missing_text = MISSING_OTHER if other else MISSING_ANSWER
            errors[text_id if text_id in state_values else choice_id] = missing_text
        else:
            answers.append(
                Answer(
                    question_id=question.question_id,
                    selected_options=[option_id] if option_id else [],
                    custom_text=text,
                )
            )
    if missing:
        present = [key for key in state_values if key.startswith(ids.MODAL_INPUT_PREFIXES)]
        if not present:
            raise CodecError("the submission carries none of this bundle's inputs")
        message = "Kandev needs every question answered together; this form lacks: "
        errors.setdefault(present[0], fit_plain(message + "; ".join(missing), 1000)[0])
    return errors or answers


def parse_reject_submission(state_values: StateValues) -> str | Errors:
    """The stripped reason of a reject modal submission, or a field error."""
    reason = str(
        (_state(state_values, ids.BLOCK_REASON, ids.ACTION_REASON) or {}).get("value") or ""
    )
    reason = reason.strip()
    if not reason:
        return {ids.BLOCK_REASON: MISSING_REASON}
    if len(reason) > KANDEV_MAX_TEXT:
        return {ids.BLOCK_REASON: _too_long("Your reason", len(reason))}
    return reason
