"""The App Home's "Remove" button of a subscription: parse, ack, delegate, tell (on Home)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App

from kandev_slack.cards import words
from kandev_slack.slack.parsing.payloads import parse_click
from kandev_slack.slack.services import Services
from kandev_slack.surfaces.subscriptions import ACTION_UNSUBSCRIBE, decode_scope

log = logging.getLogger(__name__)


def register(app: App, svc: Services) -> None:
    app.action(ACTION_UNSUBSCRIBE)(_remove_clicked(svc))


def _remove(svc: Services, user_id: str, raw: str) -> None:
    scope = decode_scope(raw)
    if scope is None:
        svc.home.notice(user_id, words.tampered_message())
        return
    svc.home.notice(user_id, svc.subscriptions.remove(user_id, *scope))


def _remove_clicked(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = parse_click(body, log)
        if click is None:
            return
        place = svc.reading.reserve()
        if place is None:
            svc.home.notice(click.user_id, words.busy_message())
            return
        place.run(_remove, svc, click.user_id, click.action.value)

    return handle
