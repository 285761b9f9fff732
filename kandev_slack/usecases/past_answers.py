"""Past answers: the same questions asked again in the same workspace, answered before.

A bundle's *question key* is a digest of its workspace and its questions' titles and prompts,
normalised (case, Unicode form, Markdown emphasis, whitespace, trailing punctuation), so an
agent asking "Which database?" again finds the earlier answer. Earlier answers come from the
store only (no Kandev call), from cards in the same channel whose route is the same: whoever
may answer the new question could answer those, so nobody sees an answer they could not see
on its own card. Resolved cards are kept for the retention period, and so are their answers.
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from kandev_slack.config.routing import Route, Routing
from kandev_slack.core.clarification import Answer, Bundle
from kandev_slack.core.domain import Card, CardState, PastAnswer, PastChoice, TaskInfo
from kandev_slack.core.normalise import normalise

#: How many earlier answers the Conversation view lists.
MAX_EARLIER = 5
#: How many candidates one lookup reads (some may belong to another route).
_CANDIDATES = 20


def question_key(workspace_id: str, bundle: Bundle) -> str:
    """The digest of a bundle's workspace and its questions (titles and prompts, in order)."""
    parts = [workspace_id]
    for question in bundle.questions:
        parts.append(normalise(question.title) + "\x1f" + normalise(question.prompt))
    return hashlib.sha256("\x1e".join(parts).encode()).hexdigest()


def past_answer(card: Card) -> PastAnswer | None:
    """What an answered card shows to later cards asking the same (None: not answered)."""
    outcome = card.outcome
    if card.state is not CardState.ANSWERED or outcome is None:
        return None
    return PastAnswer(
        pending_id=card.pending_id,
        channel=card.channel,
        ts=card.ts,
        via=outcome.via,
        by_user=outcome.by_user,
        choices=past_choices(card.bundle, outcome.answers),
        at=outcome.at,
    )


def past_choices(bundle: Bundle, answers: list[Answer]) -> tuple[PastChoice, ...]:
    """``answers`` as a later card shows them once ``bundle`` is gone: per question, in the
    bundle's order, the chosen options' labels (ids when unlabelled) and the free text."""
    if not answers:
        return ()
    by_question = {a.question_id: a for a in answers}
    chosen = (
        [by_question.get(q.question_id) for q in bundle.questions]
        if bundle.questions
        else list(by_question.values())
    )
    return tuple(_choice(bundle, answer) for answer in chosen)


def _choice(bundle: Bundle, answer: Answer | None) -> PastChoice:
    if answer is None:
        return PastChoice()
    question = bundle.question(answer.question_id)
    labels = []
    for option_id in dict.fromkeys(answer.selected_options):  # each option once, in order
        option = question.option(option_id) if question else None
        labels.append(option.label if option and option.label else option_id)
    return PastChoice(labels=tuple(labels), text=answer.custom_text)


class AnsweredCards(Protocol):
    """What past answers read: :meth:`kandev_slack.store.CardsRepository.answered_like`."""

    def answered_like(
        self, question_key: str, channel: str, *, exclude: str = "", limit: int = 20
    ) -> list[Card]: ...


class PastAnswers:
    def __init__(self, cards: AnsweredCards, routing: Routing) -> None:
        self.cards = cards
        self.routing = routing

    def earlier(
        self, bundle: Bundle, task: TaskInfo, route: Route, *, limit: int = MAX_EARLIER
    ) -> list[PastAnswer]:
        """Earlier answers to the same questions in the same workspace, channel and route,
        most recent first."""
        key = question_key(task.workspace_id, bundle)
        found: list[PastAnswer] = []
        candidates = self.cards.answered_like(
            key, route.channel, exclude=bundle.pending_id, limit=_CANDIDATES
        )
        for card in candidates:
            if self.routing.route_for(card.task) != route:
                continue
            past = past_answer(card)
            if past is not None:
                found.append(past)
            if len(found) >= limit:
                break
        return found

    def last(self, bundle: Bundle, task: TaskInfo, route: Route) -> PastAnswer | None:
        """The most recent earlier answer (what a new card shows), if any."""
        earlier = self.earlier(bundle, task, route, limit=1)
        return earlier[0] if earlier else None
