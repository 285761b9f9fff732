"""The message shortcut "Reject agent question": parse, ack, delegate.

The card is recognised by (channel, ts) in the store, never by anything the payload echoes.
On a pending card the reject modal opens (its submission is handled in views.py); on a resolved
card or any other message the person is told why not, without asking Kandev anything.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App

from bot import messages
from bot.cards.ids import SHORTCUT_REJECT
from bot.cards.listing import closed_card_message
from bot.domain import CardOutcome
from bot.slack.gateway import SlackError
from bot.slack.listeners.actions import build_modal
from bot.slack.payloads import MessageShortcut, PayloadError, parse
from bot.slack.services import Services

log = logging.getLogger(__name__)


def register(app: App, svc: Services) -> None:
    app.message_shortcut(SHORTCUT_REJECT)(_reject(svc))


def _reject(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        try:
            shortcut = parse(MessageShortcut, body)
        except PayloadError as exc:
            log.warning("refused a malformed shortcut: %s", exc)
            return
        user, channel = shortcut.user_id, shortcut.channel.id
        where: dict[str, Any] = {"channel": channel or None, "response_url": shortcut.response_url}
        card = svc.card_at(channel, shortcut.message.ts)
        if card is None:
            svc.tell(user, messages.not_a_card_message(), **where)
            return
        if card.state.terminal:
            outcome = card.outcome or CardOutcome(state=card.state, at=card.updated_at)
            svc.tell(user, closed_card_message(outcome, card.bundle), **where)
            return
        refusal = svc.answers.precheck(card, user, channel, action="reject")
        if refusal is not None:
            # Refused before the modal opens: audited like every other attempt.
            svc.store.audit(
                card.pending_id, user, "reject", "slack:shortcut", refusal.kind, "not opened"
            )
            svc.tell_verdict(user, refusal, **where)
            return
        view = build_modal(
            svc, card, "reject", origin="shortcut", response_url=shortcut.response_url
        )
        try:
            svc.slack.open_view(shortcut.trigger_id, view)
        except SlackError as exc:
            log.warning("could not open the reject modal: %s", exc.error)
            svc.tell(user, "Slack did not open the form in time; please try again.", **where)

    return handle
