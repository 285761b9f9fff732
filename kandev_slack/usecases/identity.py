"""Whose Kandev account a Slack person acts with: the bot's, or their own (issue 32).

Each route says (``identity`` in the routing file, kandev_slack/config/routing.py):

- ``bot``: every click is made with the bot's token (the default; today's behaviour);
- ``linked``: a person who linked their Kandev account (their personal access token, checked
  with ``GET /api/v1/auth/me`` and stored encrypted) acts with it, anyone else with the bot's;
- ``required``: only linked people may answer, reject, skip, approve or claim.

Kandev cannot act as someone else (no impersonation): only a person's own token makes Kandev
apply its workspace privacy to them, credit them in its permission audit and keep their
Needs-you inbox. So a linked person's resolution calls, their views and their inbox changes go
through :meth:`Identities.acting` / :meth:`Identities.seeing`, the one place a use-case takes
the Kandev client to use for a person. Kandev lets a workspace *viewer* answer and approve; the
bot does not: a person whose role there lacks ``session.prompt`` is refused before anything is
sent, and so is one who cannot see the workspace at all.

Everything here returns kinds; the edges word them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from kandev_slack.config.routing import IdentityMode
from kandev_slack.core.domain import Action, Card, TaskInfo
from kandev_slack.usecases.answerers import Answerers

log = logging.getLogger(__name__)

# ---- the ports ---------------------------------------------------------------------------

#: The workspace scope that lets a person answer agents (a collaborator's and an owner's; a
#: viewer has only ``workspace.read``, though Kandev lets a viewer answer: the bot does not).
ANSWER_SCOPE = "session.prompt"

#: Kandev did not take the token (``refused``) or could not be asked (``unreachable``).
Unchecked = Literal["refused", "unreachable"]


class Account(Protocol):
    """A Kandev account as its own token describes it (kandev_slack.kandev.models.KandevUser)."""

    @property
    def id(self) -> str: ...
    @property
    def email(self) -> str: ...
    @property
    def display_name(self) -> str: ...


class Access(Protocol):
    """A workspace as a person's token sees it: what their role there may do
    (kandev_slack.kandev.models.Workspace)."""

    @property
    def id(self) -> str: ...
    @property
    def scopes(self) -> tuple[str, ...]: ...


class KandevAccount(Protocol):
    """What is asked of a Kandev client made for one token (kandev_slack.kandev.client)."""

    def account(self) -> Account | Unchecked:
        """Whose token it is (``GET /api/v1/auth/me``, ``authenticated:true`` required)."""
        ...

    def access(self) -> Mapping[str, Access] | Unchecked:
        """The workspaces the token sees, by id, read anew (kept here :data:`SCOPES_TTL_S`)."""
        ...

    def close(self) -> None: ...


class Link(Protocol):
    """A Slack person linked to their Kandev account (kandev_slack.store.records.KandevLink)."""

    @property
    def slack_user_id(self) -> str: ...
    @property
    def kandev_user_id(self) -> str: ...
    @property
    def display_name(self) -> str: ...
    @property
    def email(self) -> str: ...
    @property
    def token(self) -> str: ...
    @property
    def broken(self) -> bool: ...


class Links(Protocol):
    """People's links and parked clicks (kandev_slack.store.people.links.LinksRepository)."""

    @property
    def stores_tokens(self) -> bool: ...
    def get(self, slack_user_id: str) -> Link | None: ...
    def by_kandev_user(self, kandev_user_id: str) -> Link | None: ...
    def link(
        self,
        slack_user_id: str,
        kandev_user_id: str,
        display_name: str | None,
        email: str | None,
        token: str,
    ) -> None: ...
    def unlink(self, slack_user_id: str) -> bool: ...
    def mark_broken(self, slack_user_id: str, token: str) -> bool: ...
    def park_click(self, slack_user_id: str, pending_id: str, payload: dict[str, Any]) -> None: ...
    def take_parked_click(
        self, slack_user_id: str, max_age_s: float
    ) -> tuple[str, dict[str, Any]] | None: ...


K = TypeVar("K", bound=KandevAccount)

#: What goes to Kandev as the person in "required" routes (a claim changes no Kandev state,
#: but it says "I'm answering this": only someone who may answer may say it).
ACTS_IN_KANDEV: frozenset[Action] = frozenset({"answer", "reject", "approve", "claim"})

#: How long what a person's token sees of the workspaces (their roles there) is kept.
SCOPES_TTL_S = 60.0
#: How many people's Kandev clients stay open at once (least recently used closed first).
MAX_CLIENTS = 256
#: How long a click an unlinked person made in a "required" route waits for them to connect.
PARKED_FOR_S = 600.0

#: Why a person may not act with their own account here:
#: ``connect`` (a "required" route and they never linked one), ``reconnect`` (their link no
#: longer works: Kandev refused the token), ``viewer`` (their role in the task's workspace may
#: not answer agents), ``not_visible`` (their account cannot see the task's workspace),
#: ``unreachable`` (Kandev could not be asked about their access: try again).
IdentityProblem = Literal["connect", "reconnect", "viewer", "not_visible", "unreachable"]


@dataclass(frozen=True)
class Acting(Generic[K]):
    """The Kandev client one person's action is made with, and their link (None: the bot's
    token, because the route says so or they are not linked)."""

    kandev: K
    link: Link | None = None

    @property
    def kandev_user_id(self) -> str:
        return self.link.kandev_user_id if self.link is not None else ""


@dataclass(frozen=True)
class Connected:
    """A token was checked with Kandev and stored: it belongs to ``user``."""

    user: Account
    replaced: bool = False  # they were linked before (to this or another account)


#: Why a token was not linked: ``malformed`` (not a Kandev personal access token),
#: ``refused`` (Kandev does not take it: revoked, expired, its user disabled, or unknown),
#: ``unreachable`` (Kandev could not be asked), ``no_key`` (tokens cannot be stored here).
ConnectProblem = Literal["malformed", "refused", "unreachable", "no_key"]


@dataclass(frozen=True)
class NotConnected:
    problem: ConnectProblem


#: The shape of a Kandev personal access token (``kandev_pat_<8 hex>_<43 base64url>``).
TOKEN_PREFIX = "kandev_pat_"


def token_shape_ok(token: str) -> bool:
    """Whether ``token`` has the shape of a Kandev personal access token (checked before
    anything is sent: a pasted password or a session cookie is never sent to Kandev)."""
    if not token.startswith(TOKEN_PREFIX) or len(token) != 63:
        return False
    prefix, _, secret = token[len(TOKEN_PREFIX) :].partition("_")
    hex_ok = len(prefix) == 8 and all(c in "0123456789abcdef" for c in prefix)
    b64 = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    return hex_ok and len(secret) == 43 and set(secret) <= b64


class Identities(Generic[K]):
    """Which Kandev client each person acts and sees with, and their links.

    ``bot``: the bot's own client; ``client_for``: makes a client for a person's token (the
    composition root's factory; at most :data:`MAX_CLIENTS` are kept open)."""

    def __init__(
        self,
        *,
        bot: K,
        links: Links,
        answerers: Answerers,
        client_for: Callable[[str], K],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.links = links
        self.answerers = answerers
        self._client_for = client_for
        self._clock = clock
        self._lock = threading.Lock()
        self._clients: OrderedDict[str, K] = OrderedDict()
        self._scopes: dict[str, tuple[float, Mapping[str, Access]]] = {}

    # ---- the mode of a card's route ----------------------------------------------------

    def mode_of(self, task: TaskInfo) -> IdentityMode:
        route = self.answerers.route_of(task)
        return route.identity if route is not None else "bot"

    @property
    def any_linking(self) -> bool:
        """Whether any route uses people's own accounts (then Home offers to connect)."""
        return self.answerers.routing.needs_tokens

    # ---- acting ----------------------------------------------------------------------------

    def acting(self, user_id: str, card: Card, action: Action) -> Acting[K] | IdentityProblem:
        """The client ``user_id``'s ``action`` on ``card`` is made with, or why they may not
        make it with their account. Only actions that reach Kandev (and "I'm on it") are
        checked; the others act as the bot (reading, snoozing in Slack)."""
        mode = self.mode_of(card.task)
        if mode == "bot":
            return Acting(self.bot)
        link = self.links.get(user_id)
        if link is None or (link.broken and action not in ACTS_IN_KANDEV):
            if mode == "required" and action in ACTS_IN_KANDEV:
                return "connect"
            return Acting(self.bot)
        if link.broken:
            return "reconnect"
        acting = Acting(self.client(link), link)
        if action not in ACTS_IN_KANDEV:
            return acting
        return self._may_decide(acting, card.task.workspace_id) or acting

    def seeing(self, user_id: str, task: TaskInfo | None = None) -> Acting[K]:
        """The client a person's views (listing, App Home, DM cards) read with: their own in
        routes that use linked accounts (``task``'s, else any), else the bot's."""
        if task is not None and self.mode_of(task) == "bot":
            return Acting(self.bot)
        if task is None and not self.any_linking:
            return Acting(self.bot)
        link = self.links.get(user_id)
        if link is None or link.broken:
            return Acting(self.bot)
        return Acting(self.client(link), link)

    def linked(self, user_id: str, task: TaskInfo) -> Link | None:
        """The link ``user_id`` acts with on ``task``'s items: theirs in a route that uses
        people's own accounts, when it works; None when they act with the bot's (a "bot"
        route, not linked, a broken link). Opens no client (attribution, the audit)."""
        if self.mode_of(task) == "bot":
            return None
        link = self.links.get(user_id)
        return None if link is None or link.broken else link

    def workspaces_of(self, acting: Acting[K]) -> Mapping[str, Access] | Unchecked | None:
        """The workspaces a person's account sees (by id, with their role), cached briefly;
        None for the bot."""
        if acting.link is None:
            return None
        return self._workspaces(acting)

    def refused_token(self, acting: Acting[K]) -> bool:
        """Kandev answered 401 to a person's token: mark their link broken (unless they
        linked a new token meanwhile). True when it was theirs (they are asked to reconnect)."""
        if acting.link is None:
            return False
        with self._lock:
            self._forget(acting.link.token)
        marked = self.links.mark_broken(acting.link.slack_user_id, acting.link.token)
        if marked:
            log.warning("a linked person's Kandev token was refused; their link is broken")
        return marked

    def client(self, link: Link) -> K:
        """The open client of ``link``'s token (made once, kept while used)."""
        with self._lock:
            found = self._clients.get(link.token)
            if found is not None:
                self._clients.move_to_end(link.token)
                return found
            made = self._client_for(link.token)
            self._clients[link.token] = made
            while len(self._clients) > MAX_CLIENTS:
                _, oldest = self._clients.popitem(last=False)
                oldest.close()
            return made

    # ---- linking -------------------------------------------------------------------------

    def connect(self, user_id: str, token: str) -> Connected | NotConnected:
        """Check ``token`` with Kandev (``authenticated:true`` required) and store it for
        ``user_id``, replacing their earlier link. Nothing is stored unless Kandev took it."""
        token = token.strip()
        if not self.links.stores_tokens:
            return NotConnected("no_key")
        if not token_shape_ok(token):
            return NotConnected("malformed")
        trial = self._client_for(token)
        try:
            user = trial.account()
        finally:
            trial.close()
        if isinstance(user, str):
            return NotConnected(user)
        before = self.links.get(user_id)
        if before is not None:
            with self._lock:
                self._forget(before.token)
        self.links.link(user_id, user.id, user.display_name, user.email, token)
        return Connected(user, replaced=before is not None)

    def disconnect(self, user_id: str) -> bool:
        """Delete a person's link and token (False: they had none)."""
        before = self.links.get(user_id)
        if before is not None:
            with self._lock:
                self._forget(before.token)
        return self.links.unlink(user_id)

    def park(self, user_id: str, pending_id: str, request: dict[str, object]) -> None:
        """Keep the click an unlinked person made in a "required" route, to offer it again
        if they connect within :data:`PARKED_FOR_S` (a newer click replaces it)."""
        try:
            self.links.park_click(user_id, pending_id, dict(request))
        except Exception:  # the refusal still reaches them; only the offer is lost
            log.exception("could not keep a click for after connecting")

    def take_parked(self, user_id: str) -> tuple[str, dict[str, object]] | None:
        """The click ``user_id`` parked less than :data:`PARKED_FOR_S` ago (taken: offered
        once), or None."""
        return self.links.take_parked_click(user_id, PARKED_FOR_S)

    def whoami(self, user_id: str) -> Link | None:
        return self.links.get(user_id)

    def slack_user_of(self, kandev_user_id: str) -> str | None:
        """The Slack person linked to a Kandev account (attribution, the assignee)."""
        if not kandev_user_id:
            return None
        link = self.links.by_kandev_user(kandev_user_id)
        return link.slack_user_id if link is not None else None

    # ---- internals -----------------------------------------------------------------------

    def _may_decide(self, acting: Acting[K], workspace_id: str) -> IdentityProblem | None:
        workspaces = self._workspaces(acting)
        if workspaces == "refused":
            self.refused_token(acting)
            return "reconnect"
        if workspaces == "unreachable":
            return "unreachable"
        assert not isinstance(workspaces, str)
        workspace = workspaces.get(workspace_id)
        if workspace is None:
            return "not_visible"
        if ANSWER_SCOPE not in workspace.scopes:
            return "viewer"
        return None

    def _workspaces(self, acting: Acting[K]) -> Mapping[str, Access] | Unchecked:
        assert acting.link is not None
        token = acting.link.token
        now = self._clock()
        with self._lock:
            cached = self._scopes.get(token)
        if cached is not None and now - cached[0] < SCOPES_TTL_S:
            return cached[1]
        found = acting.kandev.access()
        if isinstance(found, str):
            return found
        with self._lock:
            self._scopes[token] = (now, found)
        return found

    def _forget(self, token: str) -> None:
        """Drop what is kept for ``token`` (called with the lock held)."""
        self._scopes.pop(token, None)
        client = self._clients.pop(token, None)
        if client is not None:
            client.close()
