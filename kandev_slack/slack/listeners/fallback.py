"""The last resort: what no other listener handles is acked and explained, never a 404 or 500.

Register this module LAST (kandev_slack/slack/listeners/__init__.py): Bolt runs the first listener
that
matches, so these catch-alls only see action ids, modal callback ids, shortcuts, commands and
events that no other module claims (an old card's button, another version's modal…). Without
them Bolt answers 404 "unhandled request", which Slack shows as an error and, for events,
counts against the app.

The Bolt error handler is here too: a payload that breaks Bolt's own matching (``actions`` that
is not a list, a ``view`` that is not an object…) gets a 400 instead of a 500; an exception in
one of our listeners is logged with its traceback.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from slack_bolt import Ack, App, BoltResponse

from kandev_slack.cards import words
from kandev_slack.slack.parsing import raw_payload, requests
from kandev_slack.slack.parsing.requests import where_of
from kandev_slack.slack.services import Services
from kandev_slack.slack.transport.acks import refuse_form
from kandev_slack.slack.transport.guard import log_undispatched

log = logging.getLogger(__name__)

ANYTHING = re.compile(r".*", re.DOTALL)


def register(app: App, svc: Services) -> None:
    app.action(ANYTHING)(_unknown_action(svc))
    app.view(ANYTHING)(_unknown_view(svc))
    # Bolt's app.view matches view_submission only: a view_closed (sent for a modal opened with
    # notify_on_close, or by anyone replaying Slack's payloads) would be a 404.
    app.view_closed(ANYTHING)(_closed_view)
    app.shortcut(ANYTHING)(_unknown_shortcut(svc))
    app.command(ANYTHING)(_unknown_command)
    app.event(ANYTHING)(_ignored_event)
    app.error(_on_error)


def _unknown_action(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        action_id = raw_payload.action_id_of(body)
        log.warning("unknown action id %s", raw_payload.quote(action_id, 80))
        container = raw_payload.obj_at(body, "container")
        card = svc.admission.card_at(where_of(body).channel, container.get("message_ts"))
        pending_id = card.pending_id if card is not None else None
        unknown = requests.unknown(
            body, "unknown_action", "slack:button", action_id, pending_id=pending_id
        )
        svc.tell(unknown.where, svc.refuse_unusable(unknown))

    return handle


def _unknown_view(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        view = raw_payload.obj_at(body, "view")
        callback_id = raw_payload.quote(view.get("callback_id"), 80)
        log.warning("unknown modal callback id %s", callback_id)
        unknown = requests.unknown(body, "unknown_form", "slack:modal", callback_id)
        refuse_form(ack, body, svc.refuse_unusable(unknown))

    return handle


def _closed_view(ack: Ack) -> None:
    ack()  # nothing to do: no modal of this app asks to be told it was closed


def _unknown_shortcut(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        callback_id = raw_payload.quote(body.get("callback_id"), 80)
        log.warning("unknown shortcut %s", callback_id)
        unknown = requests.unknown(body, "unknown_shortcut", "slack:shortcut", callback_id)
        svc.tell(unknown.where, svc.refuse_unusable(unknown))

    return handle


def _unknown_command(ack: Ack, body: dict[str, Any]) -> None:
    command = raw_payload.str_or_empty(body.get("command"))
    log.warning("unknown command %s", raw_payload.quote(command, 40))
    ack(words.unknown_command_message(command))


def _ignored_event(ack: Ack) -> None:
    ack()


def _on_error(error: Exception, response: BoltResponse | None) -> BoltResponse | None:
    """Bolt's error handler: a request Bolt's matching chokes on is a 400; our bugs are logged."""
    log_undispatched(error, log, "listener")
    if response is None:
        return None  # already acknowledged: nothing left to answer
    body = json.dumps({"ok": False, "error": "malformed request"})
    return BoltResponse(status=400, body=body, headers={"content-type": "application/json"})
