"""Modals (answer, other answer, reject, result); the validation of their submissions is
kandev_slack/kinds/question/cards/submissions.py.

Validation mirrors what Kandev would refuse, so a person sees a field error while the modal is
still open (``response_action: errors``) instead of a failure afterwards: every question
answered by an option and/or non-empty text, option ids of that question, and free text /
reasons of at most 2,000 code points after trimming.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from kandev_slack.cards import ids, words
from kandev_slack.cards.blocks import Block, context, divider, modal_view, plain, section
from kandev_slack.cards.ids import ModalMetadata, ModalOrigin
from kandev_slack.cards.limits import (
    KANDEV_MAX_TEXT,
    MAX_CONTEXT_TEXT,
    MAX_INPUT_HINT,
    MAX_INPUT_LABEL,
    MAX_OPTION_DESCRIPTION,
    MAX_OPTION_TEXT,
    MAX_PLACEHOLDER,
    MAX_RADIO_OPTIONS,
    MAX_SECTION_TEXT,
    MAX_SELECT_OPTIONS,
    MAX_VIEW_BLOCKS,
)
from kandev_slack.cards.mrkdwn import link, markdown_to_mrkdwn
from kandev_slack.cards.parts.taskline import UNTITLED_TASK, task_url
from kandev_slack.cards.text import fit_escaped, fit_plain, one_line, shorten_mrkdwn, shortened_note
from kandev_slack.cards.wording import Action
from kandev_slack.core.clarification import Bundle, Question
from kandev_slack.core.domain import TaskInfo
from kandev_slack.kinds.question.cards.fields import options_text, question_heading, question_text
from kandev_slack.kinds.question.cards.submissions import Errors, StateValues

_BLOCKS_PER_QUESTION = 5  # divider, question, full options, choice, text (Other's)
_CONTEXT_IN_MODAL = 1500


# ---- building ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FormPlace:
    """Where a form's links point (``kandev_url``) and where it came from: the card message it
    updates (``channel``, ``ts``), how it was opened (``origin``) and the ``response_url`` of
    the interaction that opened it."""

    kandev_url: str
    channel: str = ""
    ts: str = ""
    origin: ModalOrigin = "card"
    response_url: str = ""

    def metadata(self, bundle: Bundle) -> str:
        """The form's ``private_metadata``."""
        where = {k: getattr(self, k) for k in ("channel", "ts", "origin", "response_url")}
        return ModalMetadata(pending_id=bundle.pending_id, **where).encode()


def _intro(bundle: Bundle, task: TaskInfo, url: str, *, with_context: bool) -> list[Block]:
    title = fit_plain(one_line(task.title) or UNTITLED_TASK, 300)[0]
    blocks = [section(f"*{link(url, title)}*")]
    workspace = one_line(task.workspace_name)
    if workspace:
        blocks.append(context("Workspace *" + fit_escaped(workspace, 200)[0] + "*"))
    shared = markdown_to_mrkdwn(bundle.context) if with_context else ""
    if shared:
        note = shortened_note(url)
        blocks.append(section(shorten_mrkdwn(shared, _CONTEXT_IN_MODAL, note=note)[0]))
    return blocks


def _option(question: Question, index: int) -> dict[str, Any]:
    option = question.options[index]
    rendered: dict[str, Any] = {
        "text": plain(option.label, MAX_OPTION_TEXT, fallback="(no label)"),
        "value": ids.option_value(question, index),
    }
    description = one_line(option.description)
    if description:
        rendered["description"] = plain(description, MAX_OPTION_DESCRIPTION)
    return rendered


def _needs_full_options(question: Question) -> bool:
    return any(
        fit_plain(one_line(o.label), MAX_OPTION_TEXT)[1]
        or fit_plain(one_line(o.description), MAX_OPTION_DESCRIPTION)[1]
        for o in question.options
    )


#: The answer form's last choice: picking it opens a field for the person's own answer below
#: it (the form has no text box under a question otherwise: one "Other" path is enough).
OTHER_LABEL = "Other…"
#: The label of that field.
OTHER_TEXT_LABEL = "Your own answer"
#: A prompt that short, on one line, is the choice's label itself (no heading repeats it).
MAX_PROMPT_AS_LABEL = 300


def _choice_input(
    index: int, question: Question, label: str, *, required: bool, other: bool
) -> Block | None:
    """The options as one radio group (a select beyond ten); ``other``: with an "Other…"
    choice last, for an answer in the person's own words — a choice Slack reports at once
    (``dispatch_action``), so the form can show that answer's field only when it is picked."""
    if not question.options:
        return None
    room = MAX_SELECT_OPTIONS - (1 if other else 0)
    options = [_option(question, j) for j in range(min(len(question.options), room))]
    if other:
        options.append({"text": plain(OTHER_LABEL, MAX_OPTION_TEXT), "value": ids.OTHER_VALUE})
    element: dict[str, Any] = {"action_id": ids.ACTION_CHOICE, "options": options}
    if len(options) <= MAX_RADIO_OPTIONS:
        element["type"] = "radio_buttons"
    else:
        element["type"] = "static_select"
        element["placeholder"] = plain("Choose an option", MAX_PLACEHOLDER)
    block: Block = {
        "type": "input",
        "block_id": ids.choice_block_id(index, question),
        "label": plain(label, MAX_INPUT_LABEL),
        "element": element,
        "optional": not required,
    }
    if other:
        block["dispatch_action"] = True
    return block


def _text_input(index: int, question: Question, label: str, *, optional: bool) -> Block:
    return {
        "type": "input",
        "block_id": ids.text_block_id(index, question),
        "label": plain(label, MAX_INPUT_LABEL),
        "element": {
            "type": "plain_text_input",
            "action_id": ids.ACTION_TEXT,
            "multiline": True,
            "max_length": KANDEV_MAX_TEXT,
            "placeholder": plain("Write an answer in your own words", MAX_PLACEHOLDER),
        },
        "optional": optional,
    }


def prompt_label(index: int, total: int, question: Question) -> str | None:
    """The question as a field's label (``1/2 · Which database?``) when its prompt is short
    and on one line; None when it needs a block of its own (long, or several lines)."""
    prompt = question.prompt.strip()
    if "\n" in prompt or len(one_line(prompt)) > MAX_PROMPT_AS_LABEL:
        return None
    text = one_line(prompt) or one_line(question.title) or "Question"
    return f"{index + 1}/{total} · {text}" if total > 1 else text


def _question_blocks(bundle: Bundle, index: int, url: str, *, other: bool) -> list[Block]:
    """One question of a form. Its prompt is the label of its first field (a long prompt gets
    a block of its own, and the field its heading): nothing is said twice. In the answer form
    the choice is required, with "Other" for an answer in one's own words; in the "Other
    answer" form the text is required and an option may be picked as well."""
    question = bundle.questions[index]
    total = len(bundle.questions)
    note = shortened_note(url)
    blocks: list[Block] = [divider()] if total > 1 or other else []
    label = prompt_label(index, total, question)
    if label is None:
        blocks.append(section(question_text(index, total, question, note)))
        label = question_heading(index, total, question)
    if _needs_full_options(question):
        full = "*Options in full*\n"
        budget = MAX_SECTION_TEXT - len(full)
        blocks.append(section(full + options_text(question, None, note, budget=budget)))
    if other:
        text = _text_input(index, question, label, optional=False)
        choice = _choice_input(index, question, "Also pick an option", required=False, other=False)
        inputs = [text, choice]
    elif question.options:  # its own words only through "Other…" (see with_other_fields)
        inputs = [_choice_input(index, question, label, required=True, other=True)]
    else:
        inputs = [_text_input(index, question, label, optional=False)]
    blocks += [b for b in inputs if b is not None]
    return blocks


def build_answer_modal(
    bundle: Bundle, task: TaskInfo, place: FormPlace, *, question_ids: list[str] | None = None
) -> dict[str, Any]:
    """The "Answer…" modal: per question its prompt and one radio group of its options, with
    "Other…" last (its text field appears once it is picked: :func:`with_other_fields`; a
    question without options has a text field of its own); all questions are answered
    together (Kandev requires one answer per question). ``question_ids`` picks and orders the
    questions shown (default: all)."""
    url = task_url(place.kandev_url, bundle.task_id or task.task_id)
    if question_ids is None:
        indexes = list(range(len(bundle.questions)))
    else:
        position = {q.question_id: i for i, q in enumerate(bundle.questions)}
        indexes = [position[qid] for qid in question_ids if qid in position]
    blocks = _intro(bundle, task, url, with_context=True)
    room = (MAX_VIEW_BLOCKS - len(blocks) - 1) // _BLOCKS_PER_QUESTION
    for index in indexes[:room]:
        blocks += _question_blocks(bundle, index, url, other=False)
    if len(indexes) > room:
        blocks.append(context(f"More questions than fit here: {link(url, 'answer in Kandev')}"))
    count = len(indexes)
    return modal_view(
        ids.CALLBACK_ANSWER,
        "Answer agent question" if count <= 1 else "Answer agent questions",
        blocks,
        submit="Send answer" if count <= 1 else "Send answers",
        metadata=place.metadata(bundle),
    )


def build_other_modal(
    bundle: Bundle, task: TaskInfo, question: Question, place: FormPlace
) -> dict[str, Any]:
    """The "Other answer…" modal of a one-question bundle: required free text, optionally an
    option as well."""
    url = task_url(place.kandev_url, bundle.task_id or task.task_id)
    position = next(
        (i for i, q in enumerate(bundle.questions) if q.question_id == question.question_id),
        None,
    )
    if position is None:
        raise ValueError(f"question {question.question_id!r} is not part of this bundle")
    blocks = _intro(bundle, task, url, with_context=False)
    blocks += _question_blocks(bundle, position, url, other=True)
    meta = place.metadata(bundle)
    return modal_view(
        ids.CALLBACK_OTHER, "Other answer", blocks, submit="Send answer", metadata=meta
    )


def build_reject_modal(bundle: Bundle, task: TaskInfo, place: FormPlace) -> dict[str, Any]:
    """The "Reject…" modal: a required reason (at most 2,000 characters) for the agent."""
    url = task_url(place.kandev_url, bundle.task_id or task.task_id)
    blocks = _intro(bundle, task, url, with_context=False)
    headings = [
        question_heading(i, len(bundle.questions), q) for i, q in enumerate(bundle.questions)
    ]
    if headings:
        blocks.append(context("Rejecting: " + fit_escaped("; ".join(headings), 1000)[0]))
    blocks.append(section("The agent is told that its question was rejected, with your reason."))
    blocks.append(
        {
            "type": "input",
            "block_id": ids.BLOCK_REASON,
            "label": plain("Reason", MAX_INPUT_LABEL),
            "element": {
                "type": "plain_text_input",
                "action_id": ids.ACTION_REASON,
                "multiline": True,
                "max_length": KANDEV_MAX_TEXT,
                "placeholder": plain("Why should the agent not get an answer?", MAX_PLACEHOLDER),
            },
            "optional": False,
        }
    )
    meta = place.metadata(bundle)
    return modal_view(
        ids.CALLBACK_REJECT, "Reject agent question", blocks, submit="Reject", metadata=meta
    )


def build_result_modal(title: str, message: str) -> dict[str, Any]:
    """A read-only modal ("Already answered", errors). ``message`` must be safe mrkdwn (the
    wording helpers' output, or text passed through ``escape_mrkdwn``)."""
    text = shorten_mrkdwn(message.strip() or " ", MAX_SECTION_TEXT, note="…")[0]
    return modal_view(ids.CALLBACK_RESULT, title, [section(text)], submit=None, close="Close")


def build_outcome_modal(kind: str, message: str, action: Action) -> dict[str, Any]:
    """How a submission ended (a verdict's kind): sent (no message: the card says it all), or
    not and why. A redelivery of a submission that ended (a duplicate) cannot tell which way
    it did."""
    if message:
        text = message
    elif kind == "duplicate":
        text = words.already_sent_message()
    else:
        text = words.sent_message(action)
    return build_result_modal(words.result_title(kind, action), text)


def build_sending_modal(action: Action) -> dict[str, Any]:
    """What a submitted form turns into at once (its ack) while the answer or rejection is on
    its way to Kandev; ``views.update`` then shows how it ended (:func:`build_result_modal`, or
    the form again with Kandev's refusal: :func:`refill_form`)."""
    return build_result_modal(words.sending_title(action), words.sending_message(action))


def refill_form(
    form: dict[str, Any], values: StateValues, errors: Errors, *, metadata: str | None = None
) -> dict[str, Any]:
    """``form`` (one of the forms above) as the person submitted it — every input holding what
    they entered (``values``: the submission's ``view.state.values``) — with each message of
    ``errors`` (block_id -> safe mrkdwn) beside its field. For ``views.update``, which cannot
    carry ``response_action: errors``: the message goes in a context block right below the
    input, or in the input's hint when the view has no room for another block.
    ``metadata``: the submitted view's private_metadata, kept as it was."""
    view = copy.deepcopy(with_other_fields(form, values) or form)  # Other's field, if picked
    if metadata is not None:
        view["private_metadata"] = metadata
    inputs = [b for b in view["blocks"] if b.get("type") == "input"]
    shown = [b for b in inputs if b.get("block_id") in errors]
    as_blocks = len(view["blocks"]) + len(shown) <= MAX_VIEW_BLOCKS
    blocks: list[Block] = []
    for block in view["blocks"]:
        blocks.append(block)
        if block.get("type") != "input":
            continue
        element = block["element"]
        entered = (values.get(block.get("block_id", "")) or {}).get(element.get("action_id"))
        _keep(element, entered if isinstance(entered, dict) else {})
        message = errors.get(block.get("block_id", ""))
        if not message:
            continue
        if as_blocks:
            blocks.append(context(shorten_mrkdwn("⚠️ " + message, MAX_CONTEXT_TEXT, note="…")[0]))
        else:
            block["hint"] = plain("⚠️ " + message, MAX_INPUT_HINT)
    view["blocks"] = blocks
    return view


def _keep(element: dict[str, Any], entered: dict[str, Any]) -> None:
    """Make ``element`` start with what was ``entered`` in it (a state.values entry)."""
    if element.get("type") == "plain_text_input":
        text = entered.get("value")
        if isinstance(text, str) and text:
            limit = element.get("max_length") or KANDEV_MAX_TEXT
            element["initial_value"] = text[:limit]
        return
    picked = entered.get("selected_option")
    value = picked.get("value") if isinstance(picked, dict) else None
    for option in element.get("options") or []:
        if value is not None and option.get("value") == value:
            element["initial_option"] = copy.deepcopy(option)


def with_other_fields(view: dict[str, Any], values: StateValues) -> dict[str, Any] | None:
    """The answer form ``view`` with a required "Your own answer" field right below each
    question whose "Other…" is picked in ``values`` (the view's ``state.values``) and none
    below the others; None when it already is so. Block and action ids stay the same, so
    Slack keeps what was picked and typed across ``views.update``."""
    items: list[Block] = list(view.get("blocks") or [])
    result: list[Block] = []
    changed = False
    for position, block in enumerate(items):
        block_id = str(block.get("block_id") or "")
        if block_id.startswith(_TEXT_PREFIX) and position > 0:
            choice = items[position - 1]
            if _offers_other(choice) and not _other_picked(choice, values):
                changed = True
                continue
        result.append(block)
        if not _offers_other(block):
            continue
        following = items[position + 1] if position + 1 < len(items) else {}
        has_field = str(following.get("block_id") or "").startswith(_TEXT_PREFIX)
        if _other_picked(block, values) and not has_field:
            result.append(_other_field(_TEXT_PREFIX + block_id.removeprefix(_CHOICE_PREFIX)))
            changed = True
    if not changed:
        return None
    shown = {k: v for k, v in view.items() if k in _VIEW_KEYS}
    return {**shown, "blocks": result}


_CHOICE_PREFIX, _TEXT_PREFIX = ids.MODAL_INPUT_PREFIXES
#: What views.update takes of a view Slack sent (not its id, hash, state…).
_VIEW_KEYS = (
    "type", "title", "submit", "close", "blocks", "private_metadata", "callback_id",
    "clear_on_close", "notify_on_close", "external_id",
)  # fmt: skip


def _offers_other(block: Block) -> bool:
    """An answer form's choice with "Other…" (the one input reported at once)."""
    block_id = str(block.get("block_id") or "")
    return bool(block.get("dispatch_action")) and block_id.startswith(_CHOICE_PREFIX)


def _other_picked(choice: Block, values: StateValues) -> bool:
    element = choice.get("element") or {}
    action_id = str(element.get("action_id") or "")
    entered = (values.get(str(choice.get("block_id") or "")) or {}).get(action_id)
    picked = entered.get("selected_option") if isinstance(entered, dict) else None
    return isinstance(picked, dict) and picked.get("value") == ids.OTHER_VALUE


def _other_field(block_id: str) -> Block:
    return {
        "type": "input",
        "block_id": block_id,
        "label": plain(OTHER_TEXT_LABEL, MAX_INPUT_LABEL),
        "element": {
            "type": "plain_text_input",
            "action_id": ids.ACTION_TEXT,
            "multiline": True,
            "max_length": KANDEV_MAX_TEXT,
            "placeholder": plain("Write an answer in your own words", MAX_PLACEHOLDER),
        },
        "optional": False,
    }
