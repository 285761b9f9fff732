"""The message shortcut "Reject agent question": parse, ack, delegate, tell.

The card is recognised by (channel, ts) in the store, never by anything the payload echoes.
On a pending card the reject modal opens (its submission is handled in views.py); on a resolved
card or any other message the person is told why not, without asking Kandev anything.
"""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App

from kandev_slack.cards.ids import SHORTCUT_REJECT
from kandev_slack.slack.parsing import requests
from kandev_slack.slack.services import Services


def register(app: App, svc: Services) -> None:
    app.message_shortcut(SHORTCUT_REJECT)(_reject(svc))


def _reject(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        svc.open_form(requests.shortcut(body), "reject")

    return handle
