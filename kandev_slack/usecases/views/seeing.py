"""What one person's views show of Kandev when they act with their own account (issue 32).

In routes whose ``identity`` is ``linked`` or ``required``, a linked person's listing, App Home,
DM cards and digest show only what their own Kandev token can see: Kandev's visibility is per
workspace (private to its owner and members), so the bot's waiting items are filtered by the
workspaces the person's account sees (:meth:`Identities.seeing` and
:meth:`Identities.workspaces_of`, cached briefly by Identities: one Kandev call per person per
minute, never one per item). What they snoozed or dismissed in Kandev's own Needs-you inbox is
left out too: their inbox's hidden items are read with their token, one call per workspace that
has something waiting for them, cached for :data:`HIDDEN_TTL_S`.

The bot's discovery keeps the bot's token: what the bot's account cannot see is never posted,
so never shown to anyone. Routes with ``identity = "bot"`` are unchanged, and so is anyone not
linked (or whose link is broken): they see what the route lets them answer. A person whose
token Kandev refuses (401) while their views are built has their link marked broken and sees as
an unlinked person would; one whose workspaces cannot be read now (Kandev unreachable) sees
nothing of the routes that use their account until they can be (private stays private; Kandev
is asked again after :data:`UNSURE_TTL_S`).

The other way round (point 7 of the issue), a linked person's Snooze in Slack snoozes the item
in their Kandev inbox too and Unsnooze (or the snooze's end) clears it there:
:meth:`Seeing.hide` / :meth:`Seeing.show`, used by kandev_slack/usecases/answering/snooze.py.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from kandev_slack.config.routing import IdentityMode
from kandev_slack.core.domain import TaskInfo
from kandev_slack.core.snooze import kandev_snooze
from kandev_slack.usecases.identity import Acting, Identities

log = logging.getLogger(__name__)

#: How long a person's Needs-you inbox's hidden items (per workspace) are kept. Their own
#: changes made from Slack drop them at once (:meth:`Seeing.forget`).
HIDDEN_TTL_S = 15.0
#: At most this many (person, workspace) hidden lists are kept (least recently read dropped).
MAX_HIDDEN = 4096
#: After a person's workspaces could not be read (Kandev unreachable), they are not asked again
#: for this long: a Home refresh round for many people stays short while Kandev is down.
UNSURE_TTL_S = 10.0

#: How a Kandev Needs-you inbox call went (kandev_slack.kandev.client.KandevClient).
InboxChange = Literal["done", "refused", "failed"]
#: How keeping a person's Kandev inbox in step with their Slack snooze went: ``in_step``
#: (Kandev's inbox changed too), ``refused`` (Kandev refused their token: their link is marked
#: broken), ``failed`` (Kandev could not change it; the Slack snooze holds all the same).
InboxStep = Literal["in_step", "refused", "failed"]


class PersonalInbox(Protocol):
    """A person's Kandev Needs-you inbox, through their own client
    (kandev_slack.kandev.client.KandevClient)."""

    def hidden_in_inbox(self, workspace_id: str) -> frozenset[str] | Literal["refused", "failed"]:
        """What they snoozed or dismissed in the workspace's inbox (pending ids)."""
        ...

    def hide_in_inbox(self, pending_id: str, *, snooze: str | None) -> InboxChange:
        """Snooze the item for ``snooze`` ("1h", "4h", "24h") in their inbox, else dismiss it."""
        ...

    def show_in_inbox(self, pending_id: str) -> InboxChange:
        """Undo a snooze or dismissal (idempotent)."""
        ...


class Seen(Protocol):
    """What a view shows, item by item: a waiting item (``Waiting``) or a card."""

    @property
    def task(self) -> TaskInfo: ...
    @property
    def pending_id(self) -> str: ...


S = TypeVar("S", bound=Seen)


@dataclass(frozen=True, eq=False)
class Sight:
    """What one person's views show, for one build of a view (a value: made per view; it
    remembers the hidden items it read, for that view only).

    ``workspaces``: the ids of the workspaces their own Kandev account sees (None: their views
    are not limited: they see as the bot does); ``modes``: the identity mode of a task's route;
    ``hidden``: what they hid in a workspace's Kandev inbox (read once per workspace, lazily);
    ``unsure``: their workspaces could not be read now (Kandev unreachable): nothing of the
    routes that use their account is shown, and a decision made once (a DM card) waits."""

    user_id: str
    workspaces: frozenset[str] | None = None
    unsure: bool = False
    modes: Callable[[TaskInfo], IdentityMode] = field(default=lambda _task: "bot")
    hidden: Callable[[str], frozenset[str]] = field(default=lambda _workspace: frozenset())
    _read: dict[str, frozenset[str]] = field(default_factory=dict, init=False, repr=False)

    @property
    def limited(self) -> bool:
        """Whether their own account limits what they see (linked, in a linked route)."""
        return self.workspaces is not None

    def limits(self, task: TaskInfo) -> bool:
        """Whether their own account decides what they see of ``task``'s items (they are
        linked, and its route uses their account)."""
        return self.workspaces is not None and self.modes(task) != "bot"

    def sees(self, task: TaskInfo) -> bool:
        """Whether an item of ``task`` may be shown to them: always in a ``bot`` route; else
        when their account sees its workspace."""
        if self.workspaces is None or not self.limits(task):
            return True
        return task.workspace_id in self.workspaces

    def sees_workspace(self, workspace_id: str) -> bool:
        """Whether their account sees the workspace (always, when their views are not
        limited)."""
        return self.workspaces is None or workspace_id in self.workspaces

    def visible(self, items: Iterable[S]) -> list[S]:
        """``items`` whose workspace they may see (:meth:`sees`)."""
        return [item for item in items if self.sees(item.task)]

    def hidden_in_kandev(self, item: Seen) -> bool:
        """Whether they snoozed or dismissed ``item`` in their Kandev Needs-you inbox (only
        items of routes that use their account)."""
        if self.workspaces is None or not self.limits(item.task):
            return False
        workspace = item.task.workspace_id
        if workspace not in self.workspaces:
            return False
        if workspace not in self._read:
            self._read[workspace] = self.hidden(workspace)
        return item.pending_id in self._read[workspace]

    def unhidden(self, items: Iterable[S]) -> list[S]:
        """``items`` without what they hid in their Kandev inbox (a view takes out what they
        snoozed in Slack first: it shows those as snoozed, though Kandev hides them too)."""
        return [item for item in items if not self.hidden_in_kandev(item)]


def unlimited(user_id: str) -> Sight:
    """A person whose views are not limited (no Seeing wired, no route uses people's
    accounts, or they are not linked)."""
    return Sight(user_id)


class Seeing:
    """Builds each person's :class:`Sight` and keeps their Kandev inbox in step with their
    Slack snoozes. ``identities``: the one place a person's Kandev client is taken from."""

    def __init__(
        self,
        identities: Identities[Any],
        *,
        hidden_ttl_s: float = HIDDEN_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.identities = identities
        self.hidden_ttl_s = hidden_ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        #: (token, workspace id) -> (read at, hidden pending ids; None: could not be read)
        self._hidden: OrderedDict[tuple[str, str], tuple[float, frozenset[str] | None]] = (
            OrderedDict()
        )
        #: token -> when its workspaces last could not be read
        self._unsure: dict[str, float] = {}

    # ---- seeing ------------------------------------------------------------------------

    def sight(self, user_id: str) -> Sight:
        """What ``user_id``'s views show now (one read of their link, their workspaces from
        Identities' brief cache)."""
        acting = self.identities.seeing(user_id)
        if acting.link is None:
            return unlimited(user_id)
        token, now = acting.link.token, self._clock()
        with self._lock:
            failed_at = self._unsure.get(token)
        if failed_at is not None and now - failed_at < UNSURE_TTL_S:
            return self._sight(user_id, acting, frozenset(), unsure=True)
        workspaces = self.identities.workspaces_of(acting)
        if workspaces == "refused":
            self.identities.refused_token(acting)  # their link is broken: seen as unlinked
            return unlimited(user_id)
        if workspaces == "unreachable" or workspaces is None:
            log.warning("a linked person's Kandev workspaces cannot be read; showing none")
            with self._lock:
                self._unsure[token] = now
            return self._sight(user_id, acting, frozenset(), unsure=True)
        assert not isinstance(workspaces, str)
        with self._lock:
            self._unsure.pop(token, None)
        return self._sight(user_id, acting, _ids(workspaces))

    def _sight(
        self, user_id: str, acting: Acting[Any], workspaces: frozenset[str], *, unsure: bool = False
    ) -> Sight:
        return Sight(
            user_id,
            workspaces,
            unsure,
            modes=self.identities.mode_of,
            hidden=lambda workspace: self.hidden(acting, workspace),
        )

    def hidden(self, acting: Acting[Any], workspace_id: str) -> frozenset[str]:
        """What the person ``acting`` is snoozed or dismissed in the workspace's Kandev inbox
        (cached for :attr:`hidden_ttl_s`; nothing when it cannot be read)."""
        found = self.hidden_read(acting, workspace_id)
        return frozenset() if found is None else found

    def hidden_read(self, acting: Acting[Any], workspace_id: str) -> frozenset[str] | None:
        """:meth:`hidden`, but None when it could not be read (Kandev unreachable, the inbox
        off, the token refused: their link is then marked broken), for as long as that is
        kept: the DM cards' mirror of Kandev's inbox changes nothing on a failure."""
        if acting.link is None:
            return frozenset()
        key = (acting.link.token, workspace_id)
        now = self._clock()
        with self._lock:
            cached = self._hidden.get(key)
            if cached is not None and now - cached[0] < self.hidden_ttl_s:
                self._hidden.move_to_end(key)
                return cached[1]
        inbox: PersonalInbox = acting.kandev
        found = inbox.hidden_in_inbox(workspace_id)
        if found == "refused":
            self.identities.refused_token(acting)
            return None
        # A failure (the inbox off, Kandev unreachable) hides nothing in views, and is not
        # asked again before the time is up.
        hidden = None if isinstance(found, str) else frozenset(found)
        with self._lock:
            self._hidden[key] = (now, hidden)
            self._hidden.move_to_end(key)
            while len(self._hidden) > MAX_HIDDEN:
                self._hidden.popitem(last=False)
        return hidden

    def forget(self, acting: Acting[Any]) -> None:
        """Drop what is kept of the person's Kandev inbox (they changed it from Slack)."""
        if acting.link is None:
            return
        token = acting.link.token
        with self._lock:
            for key in [k for k in self._hidden if k[0] == token]:
                del self._hidden[key]

    # ---- the inbox in step (point 7) ---------------------------------------------------

    def hide(self, acting: Acting[Any], pending_id: str, hours: int) -> InboxStep | None:
        """A linked person snoozed ``pending_id`` in Slack for ``hours``: snooze it in their
        Kandev inbox too, never for less (:func:`kandev_snooze`). None: they act as the bot
        (a ``bot`` route, or not linked): Kandev's inbox is not theirs to change."""
        if acting.link is None:
            return None
        inbox: PersonalInbox = acting.kandev
        return self._step(acting, inbox.hide_in_inbox(pending_id, snooze=kandev_snooze(hours)))

    def show(self, acting: Acting[Any], pending_id: str) -> InboxStep | None:
        """A linked person's Slack snooze of ``pending_id`` was undone or ended: clear it in
        their Kandev inbox too (None: as :meth:`hide`)."""
        if acting.link is None:
            return None
        inbox: PersonalInbox = acting.kandev
        return self._step(acting, inbox.show_in_inbox(pending_id))

    def ended(self, user_id: str, task: TaskInfo, pending_id: str) -> InboxStep | None:
        """A Slack snooze of a waiting item ended: clear it in the person's Kandev inbox (when
        its route uses their account and they are linked)."""
        acting = self.identities.seeing(user_id, task)
        return self.show(acting, pending_id)

    def _step(self, acting: Acting[Any], change: InboxChange) -> InboxStep:
        self.forget(acting)
        if change == "refused":
            self.identities.refused_token(acting)
            return "refused"
        return "in_step" if change == "done" else "failed"


def _ids(workspaces: Mapping[str, object]) -> frozenset[str]:
    return frozenset(workspaces)
