"""Linking a Slack person to their own Kandev account (issue 32): connecting a personal access
token, what their link is, disconnecting, and the click they made before connecting.

The token is checked and stored by :meth:`Identities.connect
<kandev_slack.usecases.identity.Identities.connect>` (the one place that handles people's
tokens); this use-case adds what the Slack side needs around it: the person's account as a
kind (:data:`AccountState`) for App Home, ``/kandev-questions whoami`` and the connect modal;
the audit of every connect and disconnect (never the token); and, after a successful connect,
the click an unlinked person made in a ``required`` route (parked by admission) — taken at
once, kept again for the offer ("Send it" / "Discard", :data:`PARKED_FOR_S` more), and taken
for good by the person's choice. A click that is sent goes through a fresh admission and the
one interaction pipeline (kandev_slack/usecases/answering/interactions.py): a card answered
meanwhile refuses it there.

Everything here returns kinds; kandev_slack/surfaces/connect.py and kandev_slack/cards/words.py
word them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from kandev_slack.core.domain import Card
from kandev_slack.usecases.answering.admission import (
    Request,
    parked_request,
    unparked_request,
)
from kandev_slack.usecases.answering.groups import SOURCE as ANSWER_ALL
from kandev_slack.usecases.answering.thread_replies import SOURCE as THREAD_REPLY
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.identity import (
    PARKED_FOR_S,
    Account,
    Identities,
    NotConnected,
)

log = logging.getLogger(__name__)

__all__ = [
    "PARKED_FOR_S",
    "Disconnected",
    "Linked",
    "LinkedAs",
    "Linking",
    "ParkedClick",
    "offerable",
]


@dataclass(frozen=True)
class LinkedAs:
    """The person is linked to the Kandev user ``display_name`` (``email``); ``broken``:
    Kandev refused their token since (revoked, expired, their user disabled), or no key of
    KANDEV_SLACK_SECRET_KEY opens it: they are asked to reconnect."""

    display_name: str
    email: str
    broken: bool = False


@dataclass(frozen=True)
class ParkedClick:
    """What a person clicked on ``card`` before connecting (``request``: as they made it),
    offered to them once they connected."""

    request: Request
    card: Card


@dataclass(frozen=True)
class Linked:
    """The token was checked with Kandev and stored: the person acts as ``account`` from now
    on (``replaced``: an earlier link of theirs was replaced); ``parked``: the click they made
    before connecting, to offer them (None: none within :data:`PARKED_FOR_S`)."""

    account: LinkedAs
    replaced: bool = False
    parked: ParkedClick | None = None


@dataclass(frozen=True)
class Disconnected:
    """The person's link (and token) is deleted; ``had``: they had one."""

    had: bool


class CardLookup(Protocol):
    """The card of an item, stored or as Kandev lists it
    (kandev_slack/usecases/views/waiting.py ``WaitingQueue``)."""

    def card_for(self, pending_id: str) -> Card | None: ...


class Linking:
    """People's links to their Kandev accounts, as the Slack side uses them."""

    def __init__(self, identities: Identities[Any], cards: CardLookup, audit_log: Audit) -> None:
        self.identities = identities
        self.cards = cards
        self.audit_log = audit_log

    @property
    def in_use(self) -> bool:
        """Whether any route acts with people's own Kandev accounts (``identity`` linked or
        required): only then are people offered to connect."""
        return self.identities.any_linking

    def state(self, user_id: str) -> LinkedAs | None:
        """The person's link as it is now (None: they have none)."""
        link = self.identities.whoami(user_id)
        if link is None:
            return None
        return LinkedAs(link.display_name, link.email, broken=link.broken)

    def connect(self, user_id: str, token: str, *, source: str) -> Linked | NotConnected:
        """Check ``token`` with Kandev and link it to ``user_id`` (replacing their earlier
        link); nothing is stored unless Kandev took it. Audited (never the token)."""
        connected = self.identities.connect(user_id, token)
        if isinstance(connected, NotConnected):
            self._audit(user_id, "connect", source, connected.problem)
            return connected
        account = _linked_as(connected.user)
        self._audit(user_id, "connect", source, "connected", f"kandev user {connected.user.id}")
        return Linked(account, replaced=connected.replaced, parked=self._offer(user_id))

    def disconnect(self, user_id: str, *, source: str) -> Disconnected:
        """Delete the person's link and token (and their parked click). Audited."""
        had = self.identities.disconnect(user_id)
        self._audit(user_id, "disconnect", source, "disconnected" if had else "not_linked")
        return Disconnected(had)

    def take_parked(self, user_id: str, pending_id: str) -> Request | None:
        """The click offered to ``user_id`` on ``pending_id``, taken for good (to send it or
        open its form): None when it is no longer kept (older than :data:`PARKED_FOR_S`,
        sent or discarded already, the person disconnected) or the offer names another item
        than the one kept (then what is kept stays)."""
        taken = self.identities.take_parked(user_id)
        if taken is None:
            return None
        kept_for, kept = taken
        if kept_for != pending_id:
            self.identities.park(user_id, kept_for, kept)  # a newer one: not this offer's
            return None
        return unparked_request(user_id, kept)

    def discard(self, user_id: str, pending_id: str) -> bool:
        """Drop the click offered on ``pending_id`` (False: it was no longer kept)."""
        discarded = self.take_parked(user_id, pending_id) is not None
        if discarded:
            self._audit(
                user_id, "discard_parked", "slack:button", "discarded", pending_id=pending_id
            )
        return discarded

    # ---- internals -------------------------------------------------------------------------

    def _offer(self, user_id: str) -> ParkedClick | None:
        """The click the person parked before connecting, kept again for its offer (None:
        none, too old, unreadable, or its item unknown)."""
        try:
            return self._kept_for_offer(user_id)
        except Exception:  # the link is made; only the offer is lost
            log.exception("could not offer the click kept for after connecting")
            return None

    def _kept_for_offer(self, user_id: str) -> ParkedClick | None:
        taken = self.identities.take_parked(user_id)
        if taken is None:
            return None
        pending_id, kept = taken
        request = unparked_request(user_id, kept)
        card = self.cards.card_for(pending_id) if request is not None else None
        if request is None or not offerable(request) or card is None:
            log.info("a click kept for after connecting cannot be offered: %s", pending_id)
            return None
        if card.state.terminal:  # resolved since: nothing to offer (Send would be refused)
            log.info("the click kept for after connecting is on a resolved card: dropped")
            return None
        # Kept again, for the person's choice on the offer (taken once more by it).
        self.identities.park(user_id, pending_id, parked_request(request))
        return ParkedClick(request, card)

    def _audit(
        self,
        user_id: str,
        action: str,
        source: str,
        result: str,
        detail: str = "",
        *,
        pending_id: str | None = None,
    ) -> None:
        try:
            self.audit_log.audit(pending_id, user_id, action, source, result, detail)
        except Exception:  # the link is what it is; only its trace is lost
            log.exception("could not audit a %s", action)


#: Where a request's content is not in it (a submitted form's answers, a thread reply's text,
#: the answers sent to all): kept, it cannot be offered again.
_CONTENT_ELSEWHERE = ("slack:modal:", THREAD_REPLY, ANSWER_ALL)


def offerable(request: Request) -> bool:
    """Whether a parked click can be offered again as it was: a click that is the whole answer
    (an option, Skip, "I'm on it") or one that opens a form; never one whose content was
    elsewhere (a form's submission, a thread reply, Send to all)."""
    if request.source.startswith(_CONTENT_ELSEWHERE):
        return False
    if request.opens or request.action == "claim" or request.option is not None:
        return True
    return request.action == "reject"  # Skip: a rejection with Kandev's own reason


def _linked_as(user: Account) -> LinkedAs:
    return LinkedAs(user.display_name, user.email)
