"""Replies in a card's thread (``message`` events) and the Send / Cancel buttons of their
prompt: parse, ack, delegate (kandev_slack/slack/services.py,
kandev_slack/usecases/answering/thread_replies.py)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, BoltContext, BoltRequest

from kandev_slack.cards import ids
from kandev_slack.slack.parsing import raw_payload, requests
from kandev_slack.slack.services import Services
from kandev_slack.slack.transport.acks import acked_within

log = logging.getLogger(__name__)

#: As an option click (kandev_slack/slack/listeners/actions.py).
ACK_BUDGET_S = 1.0


def register(app: App, svc: Services) -> None:
    app.event("message")(_message(svc))
    app.action(ids.ACTION_REPLY_SEND)(_send(svc))
    app.action(ids.ACTION_REPLY_CANCEL)(_cancel(svc))


def _message(svc: Services):
    def handle(event: dict[str, Any], request: BoltRequest, context: BoltContext) -> None:
        message = requests.thread_message(event, bot_user_id=context.bot_user_id)
        if message is None:
            _other_message(svc, event, request)
            return
        if requests.retry_num(request.headers):
            log.info("redelivered message event %s (offered once, by its ts)", message.ts)
        # Already acknowledged (events are, before their listener runs). A reply needs only the
        # database and one ephemeral message: it is looked at here, never behind the reading
        # lane's Kandev calls (a full lane must not drop it).
        svc.reply_in_thread(message)

    return handle


def _other_message(svc: Services, event: dict[str, Any], request: BoltRequest) -> None:
    """A reply edited or deleted, or a direct message to the app (else: nothing to do)."""
    change = requests.message_change(event)
    if change is not None:
        svc.reply_changed(change)
        return
    direct = requests.direct_message(event)
    if direct is None:
        return
    if requests.retry_num(request.headers):
        log.info("redelivered direct message %s: answered once", direct.ts)
        return
    svc.direct_message(direct)


def _button(body: dict[str, Any]) -> tuple[str, str, str]:
    """(the kept reply's id, the clicker, the response_url) of a prompt's button."""
    actions = body.get("actions") or [{}]
    value = actions[0].get("value") if isinstance(actions[0], dict) else ""
    return str(value or ""), raw_payload.user_of(body), raw_payload.response_url_of(body)


def _send(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        with acked_within(ack, ACK_BUDGET_S) as acked:
            reply_id, user, url = _button(body)
            svc.send_reply(acked, reply_id, user, url)

    return handle


def _cancel(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        reply_id, user, url = _button(body)
        svc.cancel_reply(reply_id, user, url)

    return handle
