"""The forms (modals) a card offers: which one to open for a button, and reading what was
submitted. Shared by the card buttons, the listing / Home "Answer…" and the shortcut."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from kandev_slack.cards import ids
from kandev_slack.cards.wording import Action
from kandev_slack.core.domain import Card
from kandev_slack.kinds.question.cards.modals import (
    FormPlace,
    build_answer_modal,
    build_other_modal,
    build_reject_modal,
    with_other_fields,
)
from kandev_slack.kinds.question.cards.submissions import (
    parse_answer_submission,
    parse_reject_submission,
)
from kandev_slack.usecases.answering.interactions import Content, FieldErrors, ForeignInputs

__all__ = [
    "FormKind",
    "action_of",
    "form_for",
    "other_fields_update",
    "read_form",
]

#: Which form a button opens: a free-text "Other answer…", every question, or a rejection.
FormKind = Literal["other", "answer", "reject"]


def action_of(kind: FormKind) -> Action:
    return "reject" if kind == "reject" else "answer"


def form_for(card: Card, kind: FormKind, place: FormPlace) -> dict[str, Any]:
    """The modal to open for ``card``; ``place.channel``/``place.ts``: the card's message it
    was opened from (an escalation or DM card, so the person is told there), else the card's."""
    if not (place.channel and place.ts):
        place = replace(place, channel=card.channel, ts=card.ts or "")
    if kind == "reject":
        return build_reject_modal(card.bundle, card.task, place)
    if kind == "other" and len(card.bundle.questions) == 1:
        return build_other_modal(card.bundle, card.task, card.bundle.questions[0], place)
    return build_answer_modal(card.bundle, card.task, place)


def read_form(
    card: Card, action: Action, values: dict[str, Any]
) -> Content | FieldErrors | ForeignInputs:
    if action == "reject":
        reason = parse_reject_submission(values)
        return FieldErrors(reason) if isinstance(reason, dict) else Content(reason=reason)
    try:
        answers = parse_answer_submission(card.bundle, values)
    except ValueError as exc:
        return ForeignInputs(str(exc))
    return FieldErrors(answers) if isinstance(answers, dict) else Content(answers=tuple(answers))


def other_fields_update(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A choice made in an answer form (``block_actions`` from a modal): the view's id and
    the form with "Your own answer" shown exactly under the questions answered "Other…";
    None when nothing is to change (or it is not an answer form)."""
    view = body.get("view")
    if not isinstance(view, dict) or view.get("callback_id") != ids.CALLBACK_ANSWER:
        return None
    view_id = view.get("id")
    values = (view.get("state") or {}).get("values")
    if not isinstance(view_id, str) or not view_id or not isinstance(values, dict):
        return None
    updated = with_other_fields(view, values)
    return (view_id, updated) if updated is not None else None
