"""What is particular to a question bundle."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from kandev_slack.core.clarification import Bundle
from kandev_slack.core.domain import Card
from kandev_slack.core.normalise import digest, normalise
from kandev_slack.core.pending import ItemKind, PendingItem
from kandev_slack.kinds.spec import Invalid, Out, Resolver, Try

#: Another kind's key starts with its prefix (``perm:``…): a bundle's pending id has none.
_PREFIXED = re.compile(r"^[a-z]+:")


class QuestionSpec:
    kind = ItemKind.QUESTION
    item_type = Bundle
    snoozable = True
    listed_as_question = True
    markdown_headline = True
    thread_answerable = True
    has_whole_view = False

    def owns_key(self, key: str) -> bool:
        return bool(key) and not _PREFIXED.match(key)

    def invalid(self, card: Card, attempt: Try, max_text: int) -> Invalid | None:
        if attempt.action != "answer" and attempt.action != "reject":
            return Invalid("not_answer_or_reject")
        if attempt.action == "reject":
            length = len(attempt.reason.strip())
            return Invalid(length=length) if length > max_text else None
        by_question = {a.question_id: a for a in attempt.answers}
        if set(by_question) != {q.question_id for q in card.bundle.questions}:
            return Invalid("unanswered")
        for question in card.bundle.questions:
            answer = by_question[question.question_id]
            if any(question.option(o) is None for o in answer.selected_options):
                return Invalid("not_an_option")
            text = answer.custom_text.strip()
            if len(text) > max_text:
                return Invalid(length=len(text))
            if not answer.selected_options and not text:
                return Invalid("unanswered")
        return None

    def send(
        self, kandev: Resolver[Out], card: Card, attempt: Try, *, first_sent: datetime, resend: bool
    ) -> Out:
        if attempt.action == "reject":
            return kandev.reject(
                attempt.pending_id, attempt.reason, resend=resend, first_sent=first_sent
            )
        return kandev.answer(
            attempt.pending_id, list(attempt.answers), resend=resend, first_sent=first_sent
        )

    def read_back(
        self, kandev: Resolver[Out], card: Card, attempt: Try, *, first_sent: datetime
    ) -> Out | None:
        return kandev.recorded(
            card.task_id,
            card.pending_id,
            answers=None if attempt.action == "reject" else list(attempt.answers),
            reason=attempt.reason,
            session_id=card.session_id or None,
            first_sent=first_sent,
        )

    def refusal(
        self, card: Card, action: str, via: str, option: tuple[str, str] | None
    ) -> str | None:
        if action == "approve":
            return "tampered"
        if option is None:
            return None
        question = card.bundle.question(option[0])
        if question is None or question.option(option[1]) is None:
            return "tampered"
        return None

    def one_question(self, card: Card) -> bool:
        return len(card.bundle.questions) == 1

    def needs_thread_for_whole_text(self, card: Card, fits: Any) -> bool:
        return False  # a question's whole text is its modal

    def identity_key(self, item: PendingItem, workspace_id: str) -> str | None:
        """Its workspace, and per question (in order) its title, prompt and options (label
        and description, in order), normalised; its context is left out."""
        if not isinstance(item, Bundle) or not item.questions:
            return None
        parts = ["question", workspace_id]
        for question in item.questions:
            parts.append(normalise(question.title))
            parts.append(normalise(question.prompt))
            parts.append(str(len(question.options)))
            for option in question.options:
                parts.append(normalise(option.label))
                parts.append(normalise(option.description))
        return digest(parts)
