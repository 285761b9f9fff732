"""Modal submissions: parse, admit, read the form (field errors keep the modal open), submit,
ack, tell.

A submission waits for Kandev's verdict before acking when it comes within
``SUBMIT_BUDGET_S``, so a refusal by Kandev is shown in the open modal; otherwise the modal
closes and the verdict follows as an ephemeral message.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from slack_bolt import Ack, App

from bot.admission import FORM_ERRORS, Admitted, Refusal
from bot.answers import Verdict
from bot.cards import ids, messages
from bot.cards.modals import build_result_modal
from bot.cards.wording import Action
from bot.slack import raw_payload, requests
from bot.slack.acks import refuse_form
from bot.slack.forms import Content, FieldErrors, ForeignInputs, read_form
from bot.slack.lanes import when_done
from bot.slack.requests import Form, Unusable, Where
from bot.slack.services import Services

log = logging.getLogger(__name__)

#: How long a modal submission waits for Kandev before acking (Slack allows 3 s in all).
SUBMIT_BUDGET_S = 2.0
#: Verdicts that keep the modal open with the message as a field error (nothing was sent).
_KEEP_OPEN = ("invalid", "not_recorded")


def register(app: App, svc: Services) -> None:
    app.view(ids.CALLBACK_ANSWER)(_submitted(svc, "answer"))
    app.view(ids.CALLBACK_OTHER)(_submitted(svc, "answer"))
    app.view(ids.CALLBACK_REJECT)(_submitted(svc, "reject"))
    app.view(ids.CALLBACK_RESULT)(lambda ack: ack())


def _submitted(svc: Services, action: Action):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        form = requests.form(body, action)
        if isinstance(form, Unusable):
            refuse_form(ack, body, svc.refuse_unusable(form).message)
            return
        admitted = svc.admission.admit(form.request)
        if isinstance(admitted, Refusal):
            _refused(svc, ack, body, form.where, admitted)
            return
        content = read_form(admitted.card, action, form.values)
        if isinstance(content, FieldErrors):
            ack(response_action="errors", errors=content.errors)
        elif isinstance(content, ForeignInputs):
            refuse_form(ack, body, _foreign_inputs(svc, form, admitted, content).message)
        else:
            _submit(svc, ack, body, form, admitted, content)

    return handle


def _submit(
    svc: Services, ack: Ack, body: dict[str, Any], form: Form, admitted: Admitted, content: Content
) -> None:
    place = svc.answering.reserve()
    if place is None:  # nothing recorded: the form stays open to be sent again
        refuse_form(ack, body, messages.busy_message())
        return
    future: Future[Verdict] = place.run(
        svc.answers.submit, admitted, answers=content.answers, reason=content.reason
    )
    try:
        verdict = future.result(timeout=SUBMIT_BUDGET_S)
    except FutureTimeout:
        # Kandev is slow: close the modal now, report by ephemeral message when done.
        ack()
        when_done(future, lambda verdict: svc.tell_result(form.where, verdict), "answer submission")
        return
    if verdict.kind in _KEEP_OPEN:
        ack(response_action="errors", errors={_last_input(body): verdict.message})
        return
    _close(svc, ack, form.where, verdict)


def _foreign_inputs(
    svc: Services, form: Form, admitted: Admitted, foreign: ForeignInputs
) -> Refusal:
    """A form whose inputs belong to another bundle than the one its metadata names."""
    return svc.admission.refuse(
        "tampered",
        messages.tampered_message(),
        user_id=form.request.user_id,
        action=form.request.action,
        source=form.request.source,
        detail=foreign.detail,
        pending_id=admitted.card.pending_id,
    )


def _refused(svc: Services, ack: Ack, body: dict[str, Any], where: Where, refusal: Refusal) -> None:
    """A form that is not what it claims shows the refusal in the form; otherwise the form
    closes and the person is told (as for a click)."""
    if refusal.kind in FORM_ERRORS:
        refuse_form(ack, body, refusal.message)
        return
    _close(svc, ack, where, refusal)


def _close(svc: Services, ack: Ack, where: Where, result: Verdict | Refusal) -> None:
    """Close the form and tell the person where they are; a form opened from the App Home
    (no channel, no response_url) shows what happened in its place instead."""
    if result.message and not where.channel and not where.response_url:
        ack(response_action="update", view=build_result_modal("Not sent", result.message))
        return
    ack()
    svc.tell_result(where, result)


def _last_input(body: dict[str, Any]) -> str:
    """Where a Kandev refusal is shown: the last input (free text / reason) of the modal."""
    inputs = raw_payload.input_block_ids(body)
    return inputs[-1] if inputs else ids.BLOCK_REASON
