"""Modal submissions: parse, admit, read the form (field errors keep the modal open), record,
ack, send, show.

A form acks at once. What needs no I/O is answered in the ack itself: a field error keeps the
modal open (``response_action: errors``), a refusal turns the modal into its explanation.
Otherwise the submission is recorded durably (as a click is: crash recovery finishes it should
the process die after the ack), the modal turns into "Sending…" (``response_action: update``)
and, once Kandev answered, ``views.update`` shows how it ended in the same modal: sent, not
sent and why, or — when Kandev refused the content — the form again, as the person filled it,
with Kandev's message under the field. A modal closed meanwhile cannot be updated: the person
is then told where they opened it from, as before. An answer not ready within
``ACK_BUDGET_S`` (a slow user-group look-up) is acked as "Sending…" and follows by
``views.update`` (bot/slack/form_reply.py).
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App

from bot.cards import ids, words
from bot.cards.modals import (
    build_outcome_modal,
    build_result_modal,
    refill_form,
)
from bot.core.domain import Card
from bot.slack import raw_payload, requests
from bot.slack.form_reply import FormReply
from bot.slack.forms import (
    Content,
    FieldErrors,
    ForeignInputs,
    FormKind,
    action_of,
    form_for,
    read_form,
)
from bot.slack.lanes import when_done
from bot.slack.requests import Form, Unusable
from bot.slack.services import Services
from bot.usecases.admission import FORM_ERRORS, Admitted, Refusal
from bot.usecases.answers import Verdict

log = logging.getLogger(__name__)

#: How long a submission may take to be answered in its ack; after that the ack shows
#: "Sending…" and the answer follows by views.update (Slack allows 3 s).
ACK_BUDGET_S = 1.0
#: Verdicts that bring the form back with the message as a field error (nothing was sent).
_KEEP_OPEN = ("invalid", "not_recorded")


def register(app: App, svc: Services) -> None:
    app.view(ids.CALLBACK_ANSWER)(_submitted(svc, "answer"))
    app.view(ids.CALLBACK_OTHER)(_submitted(svc, "other"))
    app.view(ids.CALLBACK_REJECT)(_submitted(svc, "reject"))
    app.view(ids.CALLBACK_RESULT)(lambda ack: ack())


def _submitted(svc: Services, kind: FormKind):
    action = action_of(kind)

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        with FormReply(ack, body, svc.notifier, action=action, budget_s=ACK_BUDGET_S) as reply:
            form = requests.form(body, action)
            if isinstance(form, Unusable):
                reply.refuse(svc.refuse_unusable(form).message)
                return
            admitted = svc.admission.admit(form.request)
            if isinstance(admitted, Refusal):
                _refused(reply, admitted)
                return
            content = read_form(admitted.card, action, form.values)
            if isinstance(content, FieldErrors):
                reply.errors(content.errors)
            elif isinstance(content, ForeignInputs):
                reply.refuse(_foreign_inputs(svc, form, admitted, content).message)
            else:
                _submit(svc, reply, body, form, admitted, content, kind)

    return handle


def _submit(
    svc: Services,
    reply: FormReply,
    body: dict[str, Any],
    form: Form,
    admitted: Admitted,
    content: Content,
    kind: FormKind,
) -> None:
    place = svc.answering.reserve()
    if place is None:  # nothing recorded: the form stays open to be sent again
        reply.refuse(words.busy_message())
        return
    try:
        begun = svc.answers.begin(
            admitted, answers=content.answers, reason=content.reason, view_id=form.view_id or ""
        )
    except Exception:
        place.release()
        raise
    if isinstance(begun, Verdict):  # refused before anything was recorded or sent
        place.release()
        if begun.kind in _KEEP_OPEN:
            reply.errors({_last_input(body): begun.message})
        else:
            reply.update(_result_view(begun, kind))
        return
    # Recorded durably: from here a crash leaves it to crash recovery, never loses it.
    reply.sending()
    card = admitted.card

    def show(verdict: Verdict) -> None:
        _show(svc, form, card, kind, verdict)

    when_done(place.run(svc.answers.complete, begun), show, "answer submission")


def _show(svc: Services, form: Form, card: Card, kind: FormKind, verdict: Verdict) -> None:
    """Show how the submission ended in its modal (now "Sending…"); told where the person
    opened it from when the modal cannot be updated (closed meanwhile)."""
    if verdict.kind in _KEEP_OPEN:
        view = _form_again(svc, form, card, kind, verdict.message)
    else:
        view = _result_view(verdict, kind)
    if not form.view_id or not svc.notifier.update_view(form.view_id, view):
        svc.tell_result(form.where, verdict)


def _form_again(svc: Services, form: Form, card: Card, kind: FormKind, message: str) -> dict:
    """The form as the person submitted it, with ``message`` under its last input."""
    meta = form.meta
    blank = form_for(
        card,
        kind,
        kandev_url=svc.kandev_public_url,
        origin=meta.origin,
        response_url=meta.response_url,
        message=(meta.channel, meta.ts),
    )
    inputs = [b["block_id"] for b in blank["blocks"] if b.get("type") == "input"]
    where = inputs[-1] if inputs else ids.BLOCK_REASON
    return refill_form(blank, form.values, {where: message}, metadata=form.metadata)


def _result_view(verdict: Verdict, kind: FormKind) -> dict:
    return build_outcome_modal(verdict.kind, verdict.message, action_of(kind))


def _foreign_inputs(
    svc: Services, form: Form, admitted: Admitted, foreign: ForeignInputs
) -> Refusal:
    """A form whose inputs belong to another bundle than the one its metadata names."""
    return svc.admission.refuse(
        "tampered",
        words.tampered_message(),
        user_id=form.request.user_id,
        action=form.request.action,
        source=form.request.source,
        detail=foreign.detail,
        pending_id=admitted.card.pending_id,
    )


def _refused(reply: FormReply, refusal: Refusal) -> None:
    """A form that is not what it claims shows the refusal as a field error; any other
    refusal (the question was answered meanwhile, the person may not answer it…) turns the
    form into its explanation."""
    if refusal.kind in FORM_ERRORS:
        reply.refuse(refusal.message)
        return
    reply.update(build_result_modal("Not sent", refusal.message))


def _last_input(body: dict[str, Any]) -> str:
    """Where a refusal is shown: the last input (free text / reason) of the modal."""
    inputs = raw_payload.input_block_ids(body)
    return inputs[-1] if inputs else ids.BLOCK_REASON
