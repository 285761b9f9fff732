"""The forms (modals) a card offers: which one to open for a button, and reading what was
submitted. Shared by the card buttons, the listing / Home "Answer…" and the shortcut."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from bot.cards.modals import (
    FormPlace,
    build_answer_modal,
    build_other_modal,
    build_reject_modal,
)
from bot.cards.submissions import parse_answer_submission, parse_reject_submission
from bot.cards.wording import Action
from bot.core.domain import Card
from bot.usecases.interaction_results import Content, FieldErrors, ForeignInputs

__all__ = [
    "FormKind",
    "action_of",
    "form_for",
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
