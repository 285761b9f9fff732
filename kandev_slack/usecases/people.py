"""Who a Kandev account is, in Slack's terms (issue 32): attribution and the assignee.

Kandev records who resolved an approval (``permission_resolution.actor_user_id``: the owner
of the token it was made with) and who a task is assigned to (``assignee_user_id``), both as
Kandev user ids. A card names that person as Slack knows them: the Slack person who linked
that account (:meth:`~kandev_slack.usecases.identity.Identities.slack_user_of`), and the
account's display name, read with the bot's token (an admin's list of users, else the
directory every member may read), kept for :data:`NAMES_TTL_S` and read again at most every
:data:`MISS_RETRY_S` when an id is not in it (a person created since).

The bot's own account is nobody in particular: a choice Kandev credits to it was made with the
bot's token (a Slack click by someone not linked: the card credits that Slack person from the
bot's own record), so it is never named.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from kandev_slack.core.domain import Card, CardOutcome

log = logging.getLogger(__name__)

#: How long the display names read from Kandev are kept.
NAMES_TTL_S = 300.0
#: An id missing from the names read is looked up again at most this often.
MISS_RETRY_S = 30.0
#: The bot's own Kandev account, once Kandev could not say whose its token is, is asked again
#: after this long.
BOT_RETRY_S = 30.0


#: Kandev did not take the token (``refused``) or could not be asked (``unreachable``).
Unanswered = Literal["refused", "unreachable"]


class Account(Protocol):
    @property
    def id(self) -> str: ...


class Directory(Protocol):
    """What is asked of the bot's Kandev client (kandev_slack.kandev.client.KandevClient)."""

    def names(self) -> Mapping[str, str] | Unanswered:
        """Display names by Kandev user id."""
        ...

    def account(self) -> Account | Unanswered:
        """Whose token the bot's is."""
        ...

    def assignee(self, task_id: str) -> str | None:
        """The task's assignee ("" when unset; None when Kandev cannot say)."""
        ...


@dataclass(frozen=True)
class KandevPerson:
    """A Kandev account as a card names it: its id, its display name ("" when Kandev did not
    say) and the Slack person who linked it (None: nobody)."""

    kandev_user_id: str
    name: str = ""
    slack_user: str | None = None


class KandevPeople:
    """Kandev accounts as Slack people: names, links, and a task's assignee."""

    def __init__(
        self,
        kandev: Directory,
        slack_user_of: Callable[[str], str | None],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kandev = kandev
        self._slack_user_of = slack_user_of
        self._clock = clock
        self._lock = threading.Lock()
        self._names: Mapping[str, str] = {}
        self._read_at: float | None = None
        self._bot_id: str | None = None
        self._bot_asked_at: float | None = None

    def who(self, kandev_user_id: str) -> KandevPerson | None:
        """The person behind a Kandev account, or None for no one in particular: no id, the
        bot's own account, or any account while Kandev has not said which one is the bot's
        (a choice made with the bot's token is never credited to its account as a person)."""
        if not kandev_user_id:
            return None
        bot = self._bot()
        if bot is None or kandev_user_id == bot:
            return None
        return KandevPerson(
            kandev_user_id,
            name=self.name_of(kandev_user_id),
            slack_user=self._slack_user_of(kandev_user_id),
        )

    def credit(self, outcome: CardOutcome, kandev_user_id: str) -> CardOutcome:
        """``outcome`` crediting the Kandev account that made it (an approval's actor): its
        Slack person, when linked, and its name; unchanged for no one in particular."""
        person = self.who(kandev_user_id)
        if person is None:
            return outcome
        update: dict[str, object] = {
            "kandev_user": person.kandev_user_id,
            "kandev_name": person.name,
        }
        if outcome.by_user is None:
            update["by_user"] = person.slack_user
        return outcome.model_copy(update=update)

    def name_of(self, kandev_user_id: str) -> str:
        """The account's display name ("" when Kandev does not say)."""
        now = self._clock()
        with self._lock:
            names, read_at = self._names, self._read_at
        fresh = read_at is not None and now - read_at < NAMES_TTL_S
        if fresh and kandev_user_id in names:
            return names[kandev_user_id]
        if read_at is not None and now - read_at < MISS_RETRY_S:
            return names.get(kandev_user_id, "")
        found = self.kandev.names()
        if isinstance(found, str):
            log.warning("could not read Kandev's user names (%s)", found)
            return names.get(kandev_user_id, "")
        with self._lock:
            self._names, self._read_at = dict(found), now
        return found.get(kandev_user_id, "")

    def assignee_of(self, card: Card) -> str | None:
        """The Slack person linked to the Kandev account ``card``'s task is assigned to (None:
        unassigned, or nobody linked it). The task as Kandev says it now (the client keeps it
        briefly), else as it was when the card was made."""
        assignee = self.kandev.assignee(card.task_id)
        if assignee is None:
            assignee = card.task.assignee
        if not assignee:
            return None
        return self._slack_user_of(assignee)

    def _bot(self) -> str | None:
        """The bot's own Kandev account (None while Kandev has not said)."""
        with self._lock:
            if self._bot_id is not None:
                return self._bot_id
            asked = self._bot_asked_at
        now = self._clock()
        if asked is not None and now - asked < BOT_RETRY_S:
            return None
        account = self.kandev.account()
        with self._lock:
            self._bot_asked_at = now
            if not isinstance(account, str):
                self._bot_id = account.id
            return self._bot_id
