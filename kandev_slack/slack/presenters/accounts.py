"""A person's own Kandev account in Slack (issue 32): what the account listeners delegate to
(:class:`Accounts`) and the replies of its interactions — the connect modal's one answer
(:class:`ConnectAnswer`) and "Send it" on the offer of a click made before connecting
(:class:`ParkedPrompt`).

Connecting: a Connect button (App Home, a refusal, the whoami answer) or ``/kandev-questions
connect`` opens the modal (kandev_slack/surfaces/connect.py); its submission is checked with
Kandev and stored by kandev_slack/usecases/answering/linking.py. A token Kandev does not take
is a field error saying why, nothing stored; one it takes turns the modal into "Connected",
refreshes the person's Home and offers them the click they made before connecting — where
they asked to connect, else in the card's channel, else in a direct message. Kandev slow to
answer: the modal shows "Checking…" within Slack's 3 s and the answer follows by
``views.update`` (a refusal then brings the modal back, empty, with why under its input).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kandev_slack.cards import ids, words
from kandev_slack.cards.ids import CodecError, ConnectMetadata
from kandev_slack.slack.parsing.accounts import (
    AccountClick,
    AccountVerb,
    ParkedChoice,
    TokenForm,
    token_form,
)
from kandev_slack.slack.parsing.forms import FormKind
from kandev_slack.slack.parsing.requests import Interaction
from kandev_slack.slack.presenters import said
from kandev_slack.slack.presenters.tell import FormOpener, Teller
from kandev_slack.slack.transport.acks import AckBudget
from kandev_slack.slack.transport.lanes import Lane
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.surfaces.connect import (
    account_reply,
    checking_modal,
    connect_modal,
    connected_modal,
    note_blocks,
    parked_offer,
    with_connect_button,
)
from kandev_slack.usecases.answering.admission import Admitted, Request, Where
from kandev_slack.usecases.answering.groups import Offer
from kandev_slack.usecases.answering.interactions import Interactions, Result, Told
from kandev_slack.usecases.answering.linking import Linked, LinkedAs, Linking, ParkedClick
from kandev_slack.usecases.answering.verdicts import Verdict
from kandev_slack.usecases.identity import NotConnected
from kandev_slack.usecases.views.home import HomeService

log = logging.getLogger(__name__)

#: How long the connect modal's submission may take (Kandev asked whose the token is) before
#: it is acknowledged as "Checking…" (Slack allows 3 s).
CONNECT_BUDGET_S = 2.0
#: The audit's sources of a connect / disconnect.
SOURCE_MODAL = "slack:modal:connect"
SOURCE_COMMAND = "slack:command"
SOURCE_BUTTON = "slack:button"

#: What a slash command's answer is: text and blocks (None: the modal was opened instead).
CommandAnswer = tuple[str, list[dict[str, Any]]] | None


class ConnectAnswer:
    """The one answer of a submitted connect modal, always within Slack's 3 s: in the ack
    when ready within ``budget_s`` (a field error, or "Connected"), else the ack shows
    "Checking…" and the answer follows by ``views.update``. Use as a context manager."""

    def __init__(
        self, ack: Callable[..., Any], view_id: str, notifier: Notifier, *, budget_s: float
    ) -> None:
        self._ack = ack
        self._view_id = view_id
        self._notifier = notifier
        self._lock = threading.Lock()
        self._acked = False
        self._budget = AckBudget(ack, budget_s, self._budget_spent)

    def __enter__(self) -> ConnectAnswer:
        self._budget.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._budget.cancel()
        if self._first():  # left without an answer (a failure): the modal closes
            self._ack()

    def refused(self, why: str, metadata: str, account: LinkedAs | None) -> None:
        """Nothing was stored: ``why`` under the token's input (the modal stays open)."""
        if self._first():
            self._ack(response_action="errors", errors={ids.BLOCK_TOKEN: why})
            return
        self._replace(connect_modal(metadata, account, problem=why))

    def connected(self, linked: Linked) -> None:
        view = connected_modal(linked.account, replaced=linked.replaced)
        if self._first():
            self._ack(response_action="update", view=view)
            return
        self._replace(view)

    def _first(self) -> bool:
        with self._lock:
            if self._acked:
                return False
            self._acked = True
        self._budget.cancel()
        return True

    def _budget_spent(self) -> None:
        if not self._first():
            return
        log.info("Kandev is slow to check a token: the connect modal shows 'Checking…'")
        try:
            self._ack(response_action="update", view=checking_modal())
        except Exception:  # the answer still follows by views.update
            log.exception("could not acknowledge the connect modal")

    def _replace(self, view: dict[str, Any]) -> None:
        if not self._view_id or not self._notifier.update_view(self._view_id, view):
            log.warning("the connect modal's answer could not be shown (it was closed?)")


@dataclass(eq=False)
class ParkedPrompt:
    """ "Send it" (or "Open the form") on the offer of a click made before connecting, sent
    through the one pipeline: acknowledged, then the offer is replaced (its response_url) by
    how it went."""

    ack: Callable[[], None]
    where: Where
    notifier: Notifier
    teller: Teller
    #: A click that opens a form: opens it once the click is admitted again.
    opener: Told | None = None

    def now(self, result: Result) -> None:
        self.ack()
        if isinstance(result, Admitted) and self.opener is not None:
            self.opener.now(result)
            self.show(words.parked_form_opened_message())
            return
        text = said.words_for(result) or words.parked_sent_message()
        self.show(text, connect=said.asks_to_connect(result))

    def recorded(self) -> None:
        self.ack()
        self.show(words.parked_sending_message())

    def later(self, verdict: Verdict) -> None:
        text = said.verdict(verdict) or words.parked_sent_message()
        self.show(text, connect=said.asks_to_connect(verdict))

    def offer(self, offer: Offer) -> None:
        self.teller.offer(self.where, offer)

    def show(self, text: str, *, connect: bool = False) -> None:
        """The offer replaced by ``text`` (where it cannot be: told beside it)."""
        blocks = with_connect_button(text) if connect else note_blocks(text)
        url = self.where.response_url
        if url and self.notifier.reply(url, text, blocks, replace=True):
            return
        self.teller.tell(self.where, text, blocks)


@dataclass(eq=False)
class Accounts:
    """What the account listeners delegate to (kandev_slack/slack/listeners/accounts.py,
    the ``/kandev-questions`` account subcommands)."""

    linking: Linking
    notifier: Notifier
    teller: Teller
    home: HomeService
    interactions: Interactions
    #: Home refreshed after a connect or disconnect (Kandev's list is read for it).
    reading: Lane
    kandev_url: str
    budget_s: float = CONNECT_BUDGET_S

    @property
    def in_use(self) -> bool:
        return self.linking.in_use

    # ---- the modal -------------------------------------------------------------------------

    def open_connect(self, click: AccountClick) -> None:
        """A Connect / Reconnect button: the modal (on top of the modal it was clicked in)."""
        if not self.linking.in_use:
            self.teller.tell(click.where, words.linking_unused_message())
            return
        where = click.where
        meta = ConnectMetadata(channel=where.channel or "", response_url=where.response_url or "")
        self._open(click.user_id, click.trigger_id, meta, where, push=click.in_modal)

    def submitted(self, ack: Callable[..., Any], body: Any) -> None:
        """The connect modal, submitted: checked with Kandev, stored, and told."""
        form = token_form(body)
        if form is None:
            ack()
            return
        with ConnectAnswer(ack, form.view_id, self.notifier, budget_s=self.budget_s) as answer:
            linked = self._connect(form, answer)
        if linked is not None:
            self._refresh_home(form.user_id)
            if linked.parked is not None:
                self._offer(form, linked.parked)

    def _connect(self, form: TokenForm, answer: ConnectAnswer) -> Linked | None:
        metadata = _encoded(form.meta)
        if not self.linking.in_use:
            answer.refused(
                words.linking_unused_message(), metadata, self.linking.state(form.user_id)
            )
            return None
        try:
            result = self.linking.connect(form.user_id, form.token, source=SOURCE_MODAL)
        except Exception:  # the database (or anything else) failed: said, nothing kept
            log.exception("could not connect a Kandev account")
            answer.refused(words.connect_problem_message("failed"), metadata, None)
            return None
        if isinstance(result, NotConnected):
            why = words.connect_problem_message(result.problem)
            answer.refused(why, metadata, self.linking.state(form.user_id))
            return None
        answer.connected(result)
        return result

    # ---- disconnect, whoami, the subcommands -----------------------------------------------

    def disconnect_clicked(self, click: AccountClick) -> None:
        """Disconnect (App Home, the whoami answer): the link is deleted; Home refreshed, and
        an ephemeral answer replaced by what was done."""
        done = self.linking.disconnect(click.user_id, source=SOURCE_BUTTON)
        self._refresh_home(click.user_id)
        if click.on_home:
            return
        text = words.disconnected_message(had=done.had)
        url = click.where.response_url
        if not (url and self.notifier.reply(url, text, note_blocks(text), replace=True)):
            self.teller.tell(click.where, text)

    def command(
        self, verb: AccountVerb, user_id: str, trigger_id: str, where: Where
    ) -> CommandAnswer:
        """``/kandev-questions connect | whoami | disconnect``: the modal opened (None), or
        the ephemeral answer."""
        if not self.linking.in_use:
            text = words.linking_unused_message()
            return text, note_blocks(text)
        if verb == "connect":
            meta = ConnectMetadata(
                channel=where.channel or "", response_url=where.response_url or ""
            )
            self._open(user_id, trigger_id, meta, where, push=False)
            return None
        if verb == "disconnect":
            done = self.linking.disconnect(user_id, source=SOURCE_COMMAND)
            self._refresh_home(user_id)
            text = words.disconnected_message(had=done.had)
            return text, note_blocks(text)
        return account_reply(self.linking.state(user_id))

    # ---- the click made before connecting ----------------------------------------------------

    def send_parked(
        self, ack: Callable[[], None], choice: ParkedChoice, *, redelivery: bool
    ) -> None:
        """ "Send it" / "Open the form": the kept click, taken, through a fresh admission and
        the one pipeline (a card answered meanwhile refuses it there)."""
        user, pending_id = choice.user_id, choice.pending_id
        request = self.linking.take_parked(user, pending_id) if pending_id else None
        if request is None:
            ack()
            if not redelivery:  # a redelivered Send: the first one was answered
                ParkedPrompt(ack, choice.where, self.notifier, self.teller).show(
                    words.parked_gone_message()
                )
            return
        interaction = Interaction(request, choice.where, choice.trigger_id, choice.response_url)
        if request.opens:
            kind: FormKind = request.opens
            opener = FormOpener(
                interaction, choice.where, kind, self.notifier, self.teller, self.kandev_url
            )
            prompt = ParkedPrompt(ack, choice.where, self.notifier, self.teller, opener)
            self.interactions.admit(interaction, prompt)
            return
        prompt = ParkedPrompt(ack, choice.where, self.notifier, self.teller)
        if request.action == "claim":
            self.interactions.claim(interaction, prompt)
        elif request.option is not None:  # an option: the whole answer
            self.interactions.click(interaction, prompt)
        elif request.action == "reject":  # Skip: a rejection with Kandev's own reason
            self.interactions.skip(interaction, prompt)
        else:  # nothing to send as it was (such a click is never offered)
            ack()
            prompt.show(words.parked_gone_message())

    def discard_parked(self, choice: ParkedChoice) -> None:
        """ "Discard": the kept click is dropped; the offer says so."""
        prompt = ParkedPrompt(lambda: None, choice.where, self.notifier, self.teller)
        if choice.pending_id and self.linking.discard(choice.user_id, choice.pending_id):
            prompt.show(words.parked_discarded_message())
        else:
            prompt.show(words.parked_gone_message())

    # ---- internals ---------------------------------------------------------------------------

    def _open(
        self, user_id: str, trigger_id: str, meta: ConnectMetadata, where: Where, *, push: bool
    ) -> None:
        view = connect_modal(_encoded(meta), self.linking.state(user_id))
        if self.notifier.open_view(trigger_id, view, push=push) is None:
            self.teller.tell(where, words.form_not_opened_message())

    def _offer(self, form: TokenForm, parked: ParkedClick) -> None:
        """The kept click, offered where the person asked to connect, else in the card's
        channel (a click on a card), else in a direct message."""
        shown = parked_offer(parked.request, parked.card)
        if shown is None:
            log.warning("a click kept for after connecting cannot be offered: its id is too long")
            return
        text, blocks = shown
        user, meta = form.user_id, form.meta
        channel = meta.channel or _card_channel(parked.request)
        told = self.notifier.tell(
            user, text, channel=channel, response_url=meta.response_url or None, blocks=blocks
        )
        if not told and not self.notifier.direct(user, text, blocks):
            log.error("could not offer %s the click they made before connecting", user)

    def _refresh_home(self, user_id: str) -> None:
        """The person's Home shows their link as it is now (in the reading lane)."""
        place = self.reading.reserve()
        if place is None:
            log.warning("Home of %s not refreshed after a link change: busy", user_id)
            return
        place.run(self._publish, user_id)

    def _publish(self, user_id: str) -> None:
        try:
            self.home.publish([user_id])
        except Exception:  # their next visit shows it
            log.exception("Home of %s not refreshed after a link change", user_id)


def _encoded(meta: ConnectMetadata) -> str:
    try:
        return meta.encode()
    except CodecError:  # a response_url too long to keep: only the channel is kept
        return ConnectMetadata(channel=meta.channel).encode()


def _card_channel(request: Request) -> str | None:
    return request.channel if request.via == "card" else None
