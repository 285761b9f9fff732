"""The presenter: what Slack shows for each result of an interaction (kandev_slack/usecases/
interactions.py) — an ephemeral message, the modal updated, field errors, a form opened — with
the words chosen from kandev_slack/cards/words.py (kandev_slack/slack/presenters/said.py).

One reply per kind of interaction, each implementing only the port its pipeline step calls
(kandev_slack/usecases/answering/interactions.py): a ``Reply`` for what is sent to Kandev —
:class:`ClickReply` (an option button: ack, then tell), :class:`FormAnswer` (a submitted form,
answered in its ack or by ``views.update``), :class:`ReplyPrompt`; a ``Told`` for what records
nothing — :class:`FormOpener` (a button or shortcut that opens a form); a ``ViewReply`` for a
view to open — :class:`ConversationOpener`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from kandev_slack.cards import ids, words
from kandev_slack.cards.ids import ModalMetadata
from kandev_slack.cards.parts import groups
from kandev_slack.core.clarification import Question
from kandev_slack.core.domain import Card
from kandev_slack.kinds.question.cards.modals import (
    FormPlace,
    build_outcome_modal,
    build_result_modal,
    refill_form,
)
from kandev_slack.slack.parsing import raw_payload
from kandev_slack.slack.parsing.forms import FormKind, action_of, form_for
from kandev_slack.slack.parsing.requests import Form, Interaction
from kandev_slack.slack.presenters import said
from kandev_slack.slack.presenters.form_reply import FormReply
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.surfaces import thread_reply
from kandev_slack.surfaces.connect import refusal_modal, with_connect_button
from kandev_slack.surfaces.conversation import loading_view, render_conversation
from kandev_slack.usecases.answering.admission import FORM_ERRORS, TRY_AGAIN, Admitted, Where
from kandev_slack.usecases.answering.groups import Offer
from kandev_slack.usecases.answering.interactions import (
    Busy,
    FieldErrors,
    Refused,
    Result,
    Unrecorded,
)
from kandev_slack.usecases.answering.thread_replies import (
    NotAllowed,
    NotNow,
    NotText,
    Offered,
    Received,
    TextTooLong,
    ThreadMessage,
    ThreadReply,
    UseTheForm,
)
from kandev_slack.usecases.answering.verdicts import Verdict
from kandev_slack.usecases.views.conversation import ConversationService
from kandev_slack.usecases.views.home import HomeService

log = logging.getLogger(__name__)

#: Verdicts that bring the form back with the message as a field error (nothing was sent).
KEEP_OPEN = ("invalid", "not_recorded", "relink")


@dataclass(eq=False)
class Teller:
    notifier: Notifier
    home: HomeService

    def tell(self, where: Where, text: str, blocks: list[dict[str, Any]] | None = None) -> None:
        """An ephemeral message to the person where they interacted; on the App Home (no
        channel, no response_url) a notice on their Home instead (its text: Home has its own
        Connect button)."""
        if not where.user_id or not text:
            return
        told = self.notifier.tell(
            where.user_id,
            text,
            channel=where.channel,
            response_url=where.response_url,
            blocks=blocks,
        )
        if not told and not self.home.notice(where.user_id, text):
            log.error("could not tell %s: %s", where.user_id, text)

    def result(self, where: Where, result: Result) -> None:
        """What ``result`` says, told; with a Connect button when it asks the person to
        connect their Kandev account (again)."""
        self._said(where, said.words_for(result), said.asks_to_connect(result))

    def verdict(self, where: Where, verdict: Verdict) -> None:
        """How a submission ended, told (a "relink" with a Connect button)."""
        self._said(where, said.verdict(verdict), said.asks_to_connect(verdict))

    def _said(self, where: Where, text: str, connect: bool) -> None:
        self.tell(where, text, with_connect_button(text) if connect and text else None)

    def offer(self, where: Where, offer: Offer) -> None:
        offer_to(self.notifier, where, offer)


def offer_to(
    notifier: Notifier, where: Where, offer: Offer, *, thread_ts: str | None = None
) -> None:
    """The offer to send a won answer to the other agents asking the same (ephemeral, where
    the person answered; nothing on the App Home: it has no ephemeral messages)."""
    members = list(offer.members)
    text, blocks = groups.answer_all_offer(offer.card.pending_id, offer.choice, members)
    told = notifier.tell(
        where.user_id,
        text,
        channel=where.channel,
        response_url=where.response_url,
        blocks=blocks,
        thread_ts=thread_ts,
    )
    if not told:
        log.info("no offer to answer all for %s: nowhere to show it", offer.card.pending_id)


@dataclass(eq=False)
class ClickReply:
    """A button click: acknowledged (``ack``, idempotent) before the person is told."""

    ack: Callable[[], None]
    where: Where
    teller: Teller

    def now(self, result: Result) -> None:
        self.ack()
        self.teller.result(self.where, result)

    def recorded(self) -> None:
        self.ack()

    def later(self, verdict: Verdict) -> None:
        self.teller.verdict(self.where, verdict)

    def offer(self, offer: Offer) -> None:
        self.teller.offer(self.where, offer)


@dataclass(eq=False)
class FormOpener:
    """A button or shortcut (already acknowledged) that opens the form of ``kind``."""

    interaction: Interaction | None  # None: the payload was unusable (only told)
    where: Where
    kind: FormKind
    notifier: Notifier
    teller: Teller
    kandev_url: str

    def now(self, result: Result) -> None:
        if isinstance(result, Admitted) and self.interaction is not None:
            self._open(self.interaction, result.card)
        else:
            self.teller.result(self.where, result)

    def _open(self, interaction: Interaction, card: Card) -> None:
        request = interaction.request
        on_message = request.via in ("card", "shortcut") and request.channel and request.ts
        channel, ts = (request.channel or "", request.ts or "") if on_message else ("", "")
        place = FormPlace(self.kandev_url, channel, ts, request.via, interaction.response_url)
        view = form_for(card, self.kind, place)
        if not self.notifier.open_form(interaction.trigger_id, view, push=interaction.in_modal):
            self.teller.tell(interaction.where, words.form_not_opened_message())


@dataclass(eq=False)
class FormAnswer:
    """A submitted form: answered in its ack (``reply``: field errors keep it open, a refusal
    turns it into its explanation, a recorded one shows "Sending…"), then how it ended replaces
    "Sending…" by ``views.update`` — or, when Kandev refused the content, the form comes back
    as the person filled it with the message under its last input. A modal closed meanwhile
    cannot be updated: the person is told where they opened it from instead."""

    reply: FormReply
    body: dict[str, Any]
    form: Form | None  # None: the payload was unusable
    kind: FormKind
    notifier: Notifier
    teller: Teller
    kandev_url: str

    def now(self, result: Result) -> None:
        match result:
            case FieldErrors(errors=errors):
                self.reply.errors(errors)
            case Refused(refusal=refusal, unusable=payload):
                # Not what it claims, or it may just be sent again in a moment (TRY_AGAIN): the
                # form stays open as they filled it, why under its field.
                if payload is not None or refusal.kind in FORM_ERRORS | TRY_AGAIN:
                    self.reply.refuse(said.words_for(result))  # the form is not what it claims
                elif said.asks_to_connect(result):
                    self.reply.update(refusal_modal(said.words_for(result)))
                else:
                    self.reply.update(build_result_modal("Not sent", said.words_for(result)))
            case Verdict(kind=kind) if kind in KEEP_OPEN:
                self.reply.errors({_last_input(self.body): said.verdict(result)})
                self._ask_to_connect(result)
            case Verdict():
                self.reply.update(self._result_view(result))
            case _:
                self.reply.refuse(said.words_for(result))  # busy: the form stays open

    def recorded(self) -> None:
        self.reply.sending()

    def later(self, verdict: Verdict) -> None:
        form = self.form
        assert form is not None, "only a readable form is sent"
        if verdict.kind in KEEP_OPEN and verdict.card is not None:
            view = self._form_again(form, verdict.card, said.verdict(verdict))
        else:
            view = self._result_view(verdict)
        if not form.view_id or not self.notifier.update_view(form.view_id, view):
            self.teller.verdict(form.where, verdict)
        else:
            self._ask_to_connect(verdict)

    def offer(self, offer: Offer) -> None:
        if self.form is not None:
            self.teller.offer(self.form.where, offer)

    def _ask_to_connect(self, verdict: Verdict) -> None:
        """A "relink" kept the form open with why: beside it, the Connect button (a field
        error cannot hold one)."""
        if self.form is not None and said.asks_to_connect(verdict):
            self.teller.verdict(self.form.where, verdict)

    def _result_view(self, verdict: Verdict) -> dict[str, Any]:
        return build_outcome_modal(verdict.kind, said.verdict(verdict), action_of(self.kind))

    def _form_again(self, form: Form, card: Card, message: str) -> dict[str, Any]:
        """The form as the person submitted it, with ``message`` under its last input."""
        meta = form.meta
        place = FormPlace(self.kandev_url, meta.channel, meta.ts, meta.origin, meta.response_url)
        blank = form_for(card, self.kind, place)
        inputs = [b["block_id"] for b in blank["blocks"] if b.get("type") == "input"]
        where = inputs[-1] if inputs else ids.BLOCK_REASON
        return refill_form(blank, form.values, {where: message}, metadata=form.metadata)


@dataclass(eq=False)
class ConversationOpener:
    """The Conversation view: opened at once showing "Loading…" (the trigger is valid 3 s),
    then filled in from Kandev (in the reading lane)."""

    interaction: Interaction | None  # None: the payload was unusable (only told)
    where: Where
    notifier: Notifier
    teller: Teller
    conversation: ConversationService
    kandev_url: str
    clock: Callable[[], datetime]

    def now(self, result: Result) -> None:
        self.teller.result(self.where, result)

    def opened(self, card: Card) -> Callable[[], None] | None:
        interaction = self.interaction
        assert interaction is not None, "only a readable click opens a view"
        metadata = ModalMetadata(
            pending_id=card.pending_id,
            channel=card.channel,
            ts=card.ts or "",
            origin=interaction.request.via,
            response_url=interaction.response_url,
        ).encode()
        view = loading_view(card, kandev_url=self.kandev_url, metadata=metadata)
        view_id = self.notifier.open_view(interaction.trigger_id, view, push=interaction.in_modal)
        if view_id is None:
            self.teller.tell(interaction.where, words.form_not_opened_message())
            return None

        def fill() -> None:
            """Read the conversation from Kandev and show it in the open view."""
            conversation = self.conversation.of(card)
            shown = render_conversation(
                conversation, kandev_url=self.kandev_url, now=self.clock(), metadata=metadata
            )
            self.notifier.update_view(view_id, shown)

        return fill


@dataclass(eq=False)
class ReplyPrompt:
    """Send on a thread reply's prompt: acknowledged, then the prompt (an ephemeral message)
    is replaced through the click's ``response_url`` by how it went."""

    ack: Callable[[], None]
    response_url: str
    notifier: Notifier
    reply: ThreadReply  # as it is sent
    #: Give the reply back (Send recorded nothing, e.g. the bot was busy): True when it was.
    reopen: Callable[[], bool]
    #: The question it answers, to show the prompt again (None: its card is gone).
    question: Question | None = None

    @property
    def text(self) -> str:
        return self.reply.text

    def now(self, result: Result) -> None:
        self.ack()
        again = isinstance(result, Refused) and result.refusal.kind in TRY_AGAIN
        if (again or isinstance(result, Busy | Unrecorded)) and self.reopen():
            # Nothing was sent (busy; or Kandev could not be asked what their account may do):
            # the prompt keeps its buttons, the person is told beside it.
            told = f"{said.words_for(result)} {thread_reply.reply_kept_message()}"
            reply = self.reply
            self.notifier.tell(
                reply.user_id, told, channel=reply.channel, thread_ts=reply.thread_ts
            )
            return
        told = said.words_for(result) or thread_reply.reply_cancelled_message()
        self.show(told, connect=said.asks_to_connect(result))

    def recorded(self) -> None:
        self.ack()
        self.show(thread_reply.reply_sending_message(self.text))

    def later(self, verdict: Verdict) -> None:
        if verdict.kind == "not_recorded" and self.reopen():
            # Nothing reached Kandev's record: the reply is given back, its prompt shown again
            # with its Send button under why.
            self.offer_again(f"{said.verdict(verdict)} {thread_reply.reply_kept_message()}")
            return
        told = said.verdict(verdict) or thread_reply.reply_sent_message(self.text)
        self.show(told, connect=said.asks_to_connect(verdict))

    def offer_again(self, note: str) -> None:
        """The prompt (Send / Cancel) in place of "Sending…", ``note`` above it."""
        reply, question = self.reply, self.question
        text, blocks = thread_reply.reply_offer(
            reply.id,
            reply.text,
            question.title if question is not None else "",
            question.prompt if question is not None else "",
            as_option=reply.option_id is not None,
            note=note,
        )
        if not (
            self.response_url and self.notifier.reply(self.response_url, text, blocks, replace=True)
        ):
            self.notifier.tell(
                reply.user_id, text, channel=reply.channel, blocks=blocks, thread_ts=reply.thread_ts
            )

    def offer(self, offer: Offer) -> None:
        reply = self.reply
        offer_to(
            self.notifier, Where(reply.user_id, reply.channel), offer, thread_ts=reply.thread_ts
        )

    def show(self, text: str, *, connect: bool = False) -> None:
        """The prompt replaced by ``text`` (with the Connect button when it asks the person
        to connect their Kandev account)."""
        if self.response_url:
            block = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
            blocks = with_connect_button(text) if connect else [block]
            self.notifier.reply(self.response_url, text, blocks, replace=True)


def tell_thread_reply(
    notifier: Notifier, message: ThreadMessage, received: Received
) -> Literal["prompted", "told", "nothing"]:
    """Tell the author of a thread reply what it got, in that thread, only them."""
    blocks: list[dict[str, Any]] | None
    match received:
        case Offered(reply=reply, question=question, option=option, edited=edited):
            text, blocks = thread_reply.reply_offer(
                reply.id,
                reply.text,
                question.title,
                question.prompt,
                as_option=option is not None,
                note=thread_reply.reply_edited_note() if edited else "",
            )
        case NotText(kind=kind):
            text, blocks = thread_reply.reply_not_text_message(kind), None
        case UseTheForm():
            text, blocks = thread_reply.reply_use_form_message(), None
        case NotAllowed(unverifiable=unverifiable):
            text, blocks = thread_reply.reply_not_allowed_message(unverifiable=unverifiable), None
        case TextTooLong(length=length):
            text, blocks = thread_reply.reply_too_long_message(length), None
        case NotNow():
            text, blocks = thread_reply.reply_not_now_message(), None
        case _:
            return "nothing"
    told = notifier.tell(
        message.user_id, text, channel=message.channel, blocks=blocks, thread_ts=message.thread_ts
    )
    if not told:
        log.error("could not tell %s about their reply in %s", message.user_id, message.channel)
    return "prompted" if isinstance(received, Offered) else "told"


@dataclass(eq=False)
class RecoveryAnnouncer:
    """Tells the person how a submission crash recovery settled ended (kandev_slack/usecases/
    recovery.py): in the card's channel, and in the modal left on "Sending…"."""

    notifier: Notifier

    def recovered(self, user: str, channel: str | None, view_id: str, verdict: Verdict) -> None:
        if channel:
            self.notifier.tell(user, said.recovered(verdict), channel=channel)
        if view_id:
            view = build_outcome_modal(verdict.kind, said.verdict(verdict), verdict.action)
            self.notifier.update_view(view_id, view)


def _last_input(body: dict[str, Any]) -> str:
    """Where a refusal is shown: the last input (free text / reason) of the modal."""
    inputs = raw_payload.input_block_ids(body)
    return inputs[-1] if inputs else ids.BLOCK_REASON
