"""Modal submissions: parse, ack, delegate, tell (kandev_slack/usecases/answering/interactions.py
runs the
pipeline, kandev_slack/slack/presenters/tell.py shows each result).

A form acks at once. What needs no I/O is answered in the ack itself: a field error keeps the
modal open (``response_action: errors``), a refusal turns the modal into its explanation.
Otherwise the submission is recorded durably (as a click is: crash recovery finishes it should
the process die after the ack), the modal turns into "Sending…" (``response_action: update``)
and, once Kandev answered, ``views.update`` shows how it ended in the same modal. An answer not
ready within ``ACK_BUDGET_S`` (a slow user-group look-up) is acked as "Sending…" and follows by
``views.update`` (kandev_slack/slack/presenters/form_reply.py).
"""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App

from kandev_slack.cards import ids
from kandev_slack.slack.parsing import requests
from kandev_slack.slack.parsing.forms import FormKind, action_of
from kandev_slack.slack.presenters.form_reply import FormReply
from kandev_slack.slack.services import Services

#: How long a submission may take to be answered in its ack; after that the ack shows
#: "Sending…" and the answer follows by views.update (Slack allows 3 s).
ACK_BUDGET_S = 1.0


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
            svc.interactions.submit(form, svc.form_answer(reply, body, form, kind))

    return handle
