"""What the Slack listeners delegate to, in one object, and how they tell one person."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.cards import words
from bot.cards.conversation import loading_view, render_conversation
from bot.cards.ids import ModalMetadata
from bot.core.domain import Card
from bot.slack.forms import FormKind, form_for
from bot.slack.lanes import Lane
from bot.slack.requests import Interaction, Unusable, Where
from bot.slack_api.notify import Notifier
from bot.usecases.admission import Admission, Refusal
from bot.usecases.answers import AnswerService, Verdict
from bot.usecases.conversation import ConversationService
from bot.usecases.home import HomeService
from bot.usecases.listing import ListingService
from bot.usecases.subscriptions import SubscriptionService

log = logging.getLogger(__name__)


@dataclass
class Services:
    admission: Admission
    answers: AnswerService
    listing: ListingService
    home: HomeService
    notifier: Notifier
    kandev_public_url: str
    #: Answers and rejections on their way to Kandev (they may outlast an ack).
    answering: Lane
    #: Listings, Home tabs and Conversation views (Kandev's lists and Slack's permalinks).
    reading: Lane
    #: ``/kandev-questions subscribe | unsubscribe | subscriptions`` and Home's remove buttons.
    subscriptions: SubscriptionService
    conversation: ConversationService
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def tell(self, where: Where, text: str) -> None:
        """An ephemeral message to the person where they interacted; on the App Home (no
        channel, no response_url) a notice on their Home instead."""
        if not where.user_id or not text:
            return
        told = self.notifier.tell(
            where.user_id, text, channel=where.channel, response_url=where.response_url
        )
        if not told and not self.home.notice(where.user_id, text):
            log.error("could not tell %s: %s", where.user_id, text)

    def tell_result(self, where: Where, result: Verdict | Refusal) -> None:
        """Tell the person a verdict or a refusal where they interacted."""
        self.tell(where, result.message)

    def open_form(self, interaction: Interaction, card: Card, kind: FormKind) -> None:
        """Open the form of ``kind`` for ``card`` on the interaction's trigger (or say why
        not)."""
        request = interaction.request
        clicked = (request.channel, request.ts) if request.channel and request.ts else None
        view = form_for(
            card,
            kind,
            kandev_url=self.kandev_public_url,
            origin=request.via,
            response_url=interaction.response_url,
            message=clicked if request.via in ("card", "shortcut") else None,
        )
        if not self.notifier.open_form(interaction.trigger_id, view, push=interaction.in_modal):
            self.tell(interaction.where, words.form_not_opened_message())

    def open_form_if_admitted(self, parsed: Interaction | Unusable, kind: FormKind) -> None:
        """A button or shortcut that opens a form: refused and told, or the form opens."""
        if isinstance(parsed, Unusable):
            self.tell(parsed.where, self.refuse_unusable(parsed).message)
            return
        admitted = self.admission.admit(parsed.request)
        if isinstance(admitted, Refusal):
            self.tell_result(parsed.where, admitted)
            return
        self.open_form(parsed, admitted.card, kind)

    def open_conversation(self, interaction: Interaction, card: Card) -> tuple[str, str] | None:
        """Open the Conversation view of ``card`` at once, showing "Loading…" (the trigger is
        valid 3 s): its view id and metadata, or None (the person was told)."""
        metadata = ModalMetadata(
            pending_id=card.pending_id,
            channel=card.channel,
            ts=card.ts or "",
            origin=interaction.request.via,
            response_url=interaction.response_url,
        ).encode()
        view = loading_view(card, kandev_url=self.kandev_public_url, metadata=metadata)
        view_id = self.notifier.open_view(interaction.trigger_id, view, push=interaction.in_modal)
        if view_id is None:
            self.tell(interaction.where, words.form_not_opened_message())
            return None
        return view_id, metadata

    def fill_conversation(self, view_id: str, card: Card, metadata: str) -> None:
        """Read the conversation from Kandev and show it in the open view."""
        conversation = self.conversation.of(card)
        view = render_conversation(
            conversation, kandev_url=self.kandev_public_url, now=self.clock(), metadata=metadata
        )
        self.notifier.update_view(view_id, view)

    def refuse_unusable(self, unusable: Unusable) -> Refusal:
        """Audit a payload that could not become a request; returns the refusal to tell."""
        return self.admission.refuse(
            unusable.kind,
            words.unusable_message(unusable.kind, form=unusable.source == "slack:modal"),
            user_id=unusable.where.user_id,
            action=unusable.action,
            source=unusable.source,
            detail=unusable.detail,
            pending_id=unusable.pending_id,
        )
