"""Button clicks on cards (and on the listing / App Home): parse, ack, delegate, tell."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App

from bot.cards import ids, words
from bot.kandev.models import Answer
from bot.slack import requests
from bot.slack.acks import acked_within
from bot.slack.forms import FormKind, action_of
from bot.slack.requests import Unusable
from bot.slack.services import Services
from bot.usecases.admission import Refusal
from bot.usecases.answers import Verdict

#: How long an option click may spend recording its submission before it is acked anyway
#: (Slack allows 3 s; see ``acked_within``).
ACK_BUDGET_S = 1.0


def register(app: App, svc: Services) -> None:
    app.action(ids.ACTION_OPTION_PATTERN)(_option_clicked(svc))
    app.action(ids.ACTION_OTHER)(_form_opener(svc, "other"))
    app.action(ids.ACTION_ANSWER_MODAL)(_form_opener(svc, "answer"))
    app.action(ids.ACTION_REJECT)(_form_opener(svc, "reject"))
    app.action(ids.ACTION_OPEN)(_link_clicked)
    app.action(ids.ACTION_CONVERSATION)(_conversation_opened(svc))


def _link_clicked(ack: Ack) -> None:
    """A URL button still sends an action; Slack only needs the ack."""
    ack()


def _option_clicked(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        # parse / admit / begin (local, durable) -> ack -> Kandev -> tell
        with acked_within(ack, ACK_BUDGET_S):
            then = _record_click(svc, body)
        then()

    return handle


def _record_click(svc: Services, body: dict[str, Any]) -> Callable[[], None]:
    """Everything an option click does before its ack: parse it, admit it and record the
    submission. Returns what is left to do once acked."""
    click = requests.click(body, "answer", option=True)
    if isinstance(click, Unusable):
        refusal = svc.refuse_unusable(click)
        return lambda: svc.tell(click.where, refusal.message)
    place = svc.answering.reserve()
    if place is None:  # nothing recorded: the person clicks again later
        return lambda: svc.tell(click.where, words.busy_message())
    admitted = svc.admission.admit(click.request)
    if isinstance(admitted, Refusal):
        place.release()
        return lambda: svc.tell_result(click.where, admitted)
    question_id, option_id = click.request.option or ("", "")
    answer = Answer(question_id=question_id, selected_options=[option_id])
    begun = svc.answers.begin(admitted, answers=(answer,))

    def complete() -> None:
        verdict = begun if isinstance(begun, Verdict) else svc.answers.complete(begun)
        svc.tell_result(click.where, verdict)

    def start() -> None:
        place.run(complete)

    return start


def _conversation_opened(svc: Services):
    """Open the Conversation view at once ("Loading…"), fill it in the reading lane."""

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = requests.click(body, "view")
        if isinstance(click, Unusable):
            svc.tell(click.where, svc.refuse_unusable(click).message)
            return
        place = svc.reading.reserve()
        if place is None:
            svc.tell(click.where, words.busy_message())
            return
        admitted = svc.admission.admit(click.request)
        if isinstance(admitted, Refusal):
            place.release()
            svc.tell_result(click.where, admitted)
            return
        opened = svc.open_conversation(click, admitted.card)
        if opened is None:
            place.release()
            return
        view_id, metadata = opened
        place.run(svc.fill_conversation, view_id, admitted.card, metadata)

    return handle


def _form_opener(svc: Services, kind: FormKind):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        svc.open_form_if_admitted(requests.click(body, action_of(kind)), kind)

    return handle
