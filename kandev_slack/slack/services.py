"""What the Slack listeners delegate to, in one object, and the replies that tell one person
(kandev_slack/slack/presenters/tell.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from kandev_slack.cards.parts import groups as groups_words
from kandev_slack.cards.parts.head import skip_confirm
from kandev_slack.slack.parsing import markup
from kandev_slack.slack.parsing.forms import FormKind
from kandev_slack.slack.parsing.requests import Form, Interaction
from kandev_slack.slack.presenters import said
from kandev_slack.slack.presenters.accounts import Accounts
from kandev_slack.slack.presenters.form_reply import FormReply
from kandev_slack.slack.presenters.tell import (
    ClickReply,
    ConversationOpener,
    FormAnswer,
    FormOpener,
    ReplyPrompt,
    Teller,
    tell_thread_reply,
)
from kandev_slack.slack.presenters.tell_all import AnswerAll
from kandev_slack.slack.presenters.tell_whole import ModalClickReply, WholeOpener
from kandev_slack.slack.transport.lanes import Lane
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.surfaces import thread_reply
from kandev_slack.usecases.answering.admission import Admission, RefusalKind, Unusable, Where
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.claims import Claims
from kandev_slack.usecases.answering.groups import SOURCE as GROUP_SOURCE
from kandev_slack.usecases.answering.groups import Groups, NotYours
from kandev_slack.usecases.answering.interactions import Interactions
from kandev_slack.usecases.answering.snooze import Snoozes
from kandev_slack.usecases.answering.thread_replies import (
    SOURCE,
    Cancelled,
    Deleted,
    DirectMessage,
    NotAllowed,
    ReplyDeleted,
    ReplyEdited,
    ThreadMessage,
    ThreadReplies,
    ToSend,
)
from kandev_slack.usecases.followups.digests import Digests
from kandev_slack.usecases.followups.quiet import QuietService
from kandev_slack.usecases.followups.subscriptions import SubscriptionService
from kandev_slack.usecases.views.conversation import ConversationService
from kandev_slack.usecases.views.home import HomeService
from kandev_slack.usecases.views.listing import ListingService
from kandev_slack.usecases.views.whole_text import WholeText

log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


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
    #: "I'm on it" / "Take over" / "Release" (kandev_slack/usecases/answering/claims.py).
    claims: Claims
    #: Snooze / Unsnooze (kandev_slack/usecases/answering/snooze.py).
    snoozes: Snoozes
    #: Identical questions answered at once (kandev_slack/usecases/answering/groups.py).
    groups: Groups
    #: The click and form pipeline (kandev_slack/usecases/answering/interactions.py), built
    #: in the composition root from the services above.
    interactions: Interactions
    #: Tells one person where they interacted (or on their Home).
    teller: Teller
    #: Replies in a card's thread offered as an answer (None: not wired, e.g. some tests).
    thread_replies: ThreadReplies | None = None
    #: An approval's whole text beyond its full view, in the card's thread (None: not wired,
    #: e.g. some tests; such a text then points to Kandev).
    whole: WholeText | None = None
    #: ``/kandev-questions quiet`` (None: not wired, e.g. some tests).
    quiet: QuietService | None = None
    #: Follow-up work after a verdict (the Send-to-all offer): stopped with the other lanes
    #: (None: not wired, e.g. some tests).
    followups: Lane | None = None
    #: ``/kandev-questions digest …`` (None: not wired, e.g. some tests).
    digests: Digests | None = None
    #: People's own Kandev accounts: connect, disconnect, whoami, the clicks they made before
    #: connecting (None: not wired, e.g. some tests).
    accounts: Accounts | None = None
    clock: Callable[[], datetime] = field(default=_now)

    def tell(self, where: Where, text: str) -> None:
        """An ephemeral message to the person where they interacted (or a Home notice)."""
        self.teller.tell(where, text)

    def refuse_unusable(self, unusable: Unusable) -> str:
        """Audit a payload that could not become a request; returns what to tell."""
        self.interactions.refuse_unusable(unusable)
        return said.unusable(unusable)

    # ---- how each interaction is answered ---------------------------------------------------

    def click_reply(self, ack: Callable[[], None], where: Where, view_id: str = "") -> ClickReply:
        """How a click is answered; one in a modal (``view_id``: an approval's full view) also
        shows in that modal how it went."""
        if view_id:
            return ModalClickReply(ack, where, self.teller, self.notifier, view_id)
        return ClickReply(ack, where, self.teller)

    def form_answer(
        self, reply: FormReply, body: dict[str, Any], form: Form | Unusable, kind: FormKind
    ) -> FormAnswer:
        readable = form if isinstance(form, Form) else None
        return FormAnswer(
            reply, body, readable, kind, self.notifier, self.teller, self.kandev_public_url
        )

    # ---- a reply in a card's thread -------------------------------------------------------

    def reply_in_thread(self, message: ThreadMessage) -> None:
        """A person's reply in a thread: offered with Send / Cancel, pointed to the form, or
        (someone who may not answer, seeming to) told quietly and audited; else nothing."""
        if self.thread_replies is None:
            return
        message = replace(message, text=markup.decode(message.text, self.notifier.user_name))
        received = self.thread_replies.received(message)
        if isinstance(received, NotAllowed):
            where = Where(message.user_id, message.channel)
            detail = f"thread reply {message.ts}"
            kind: RefusalKind = "unverifiable" if received.unverifiable else "forbidden"
            self.admission.refuse(
                Unusable(kind, detail, "answer", SOURCE, where, received.card.pending_id)
            )
        tell_thread_reply(self.notifier, message, received)

    def reply_changed(self, change: ReplyEdited | ReplyDeleted) -> None:
        """A reply's message edited (Send sends what it says now: offered again) or deleted
        (Send sends nothing)."""
        if self.thread_replies is None:
            return
        if isinstance(change, ReplyDeleted):
            self.thread_replies.deleted(change)
            return
        text = markup.decode(change.text, self.notifier.user_name)
        edit = replace(change, text=text)
        received = self.thread_replies.edited(edit)
        message = ThreadMessage(edit.channel, edit.thread_ts, edit.ts, edit.user_id, text)
        tell_thread_reply(self.notifier, message, received)

    def direct_message(self, message: DirectMessage) -> None:
        """A message to the app in its Messages tab: it is not read; say so there, and where
        questions are answered (only its author sees it)."""
        told = self.notifier.tell(
            message.user_id, thread_reply.dm_help_message(), channel=message.channel
        )
        if not told:
            log.warning("could not answer a direct message from %s", message.user_id)

    def send_reply(self, ack: Callable[[], None], reply_id: str, user_id: str, url: str) -> None:
        """Send on a thread reply's prompt: once, by its author, through the one pipeline."""
        if self.thread_replies is None:
            ack()
            return
        sending = self.thread_replies.send(reply_id, user_id)
        if isinstance(sending, Deleted):
            ack()
            told = thread_reply.reply_deleted_message()
            block = {"type": "section", "text": {"type": "mrkdwn", "text": told}}
            if url:
                self.notifier.reply(url, told, [block], replace=True)
            return
        if not isinstance(sending, ToSend):
            ack()  # a double click, or not theirs: the first click's result stands
            return
        replies = self.thread_replies
        prompt = ReplyPrompt(
            ack,
            url,
            self.notifier,
            sending.reply,
            lambda: replies.reopen(reply_id, user_id),
            sending.question,
        )
        self.interactions.answer(sending.request, sending.answers, prompt)

    def cancel_reply(self, reply_id: str, user_id: str, url: str) -> None:
        """Cancel on a thread reply's prompt: nothing is sent, the prompt goes away."""
        if self.thread_replies is None:
            return
        if isinstance(self.thread_replies.cancel(reply_id, user_id), Cancelled) and url:
            self.notifier.delete_original(url)

    # ---- Send to all (identical questions) -------------------------------------------------

    def answer_all(
        self,
        ack: Callable[[], None],
        pending_id: str,
        where: Where,
        *,
        detail: str,
        redelivery: bool = False,
        members: Sequence[str] | None = None,
    ) -> None:
        """Send on the offer to answer every identical question: each member through the one
        pipeline (admitted, recorded, sent on its own), then one summary in place of the
        offer. A value that names no card this person's answer won is refused and audited.
        ``members``: the bundles the offer named (None: an offer made before it named them)."""
        plan = self.groups.send_all(
            pending_id,
            where.user_id,
            channel=where.channel,
            redelivery=redelivery,
            members=members,
        )
        if isinstance(plan, NotYours):
            unusable = Unusable(
                "tampered",
                f"{plan.why}: {detail}",
                "answer",
                GROUP_SOURCE,
                where,
                pending_id or None,
            )
            told = self.refuse_unusable(unusable)
            ack()
            if where.response_url:
                self.notifier.reply(
                    where.response_url, told, groups_words.offer_blocks_of(told), replace=True
                )
            return
        collector = AnswerAll(
            ack, where.response_url or "", self.notifier, plan, self.kandev_public_url
        )
        try:
            for send in plan.sends:
                self.interactions.answer(send.request, send.answers, collector.member(send))
        finally:
            collector.submitted()

    def decline_all(self, pending_id: str, where: Where) -> None:
        """No thanks: the offer goes away; nothing is sent."""
        self.groups.declined(pending_id, where.user_id)
        if where.response_url:
            self.notifier.delete_original(where.response_url)

    def ask_skip(self, parsed: Interaction | Unusable) -> None:
        """Skip… in a card's "More" overflow: the person is asked to confirm (an ephemeral
        with "Skip it" and "Keep"); nothing is sent yet. A tampered option is refused."""
        if isinstance(parsed, Unusable):
            self.tell(parsed.where, self.refuse_unusable(parsed))
            return
        request, where = parsed.request, parsed.where
        text, blocks = skip_confirm(
            request.pending_id or "", request.channel or "", request.ts or ""
        )
        told = self.notifier.tell(
            where.user_id,
            text,
            channel=where.channel,
            response_url=where.response_url,
            blocks=blocks,
        )
        if not told:
            log.error("could not ask %s to confirm a skip", where.user_id)

    def end_confirm(self, where: Where) -> None:
        """The confirm of Skip… goes away once answered (Skip it or Keep)."""
        if where.response_url:
            self.notifier.delete_original(where.response_url)

    def open_form(self, parsed: Interaction | Unusable, kind: FormKind) -> None:
        """A button or shortcut that opens a form: refused and told, or the form opens."""
        interaction = parsed if isinstance(parsed, Interaction) else None
        if interaction is not None:  # what it opens, should it be kept until they connect
            interaction = replace(interaction, request=replace(interaction.request, opens=kind))
            parsed = interaction
        opener = FormOpener(
            interaction, parsed.where, kind, self.notifier, self.teller, self.kandev_public_url
        )
        self.interactions.admit(parsed, opener)

    def open_conversation(self, parsed: Interaction | Unusable) -> None:
        """The Conversation view: opened at once, filled in the reading lane."""
        interaction = parsed if isinstance(parsed, Interaction) else None
        opener = ConversationOpener(
            interaction,
            parsed.where,
            self.notifier,
            self.teller,
            self.conversation,
            self.kandev_public_url,
            self.clock,
        )
        self.interactions.view(parsed, opener)

    def open_whole(self, parsed: Interaction | Unusable) -> None:
        """An approval's full view ("Show whole command", "Review and decide…")."""
        interaction = parsed if isinstance(parsed, Interaction) else None
        opener = WholeOpener(
            interaction,
            parsed.where,
            self.notifier,
            self.teller,
            self.whole,
            self.kandev_public_url,
        )
        self.interactions.view(parsed, opener)
