"""An approval: an agent's tool-permission request (ACP ``session/request_permission``) —
"may I run ``rm -rf build``?" — with the options the agent offered, as Kandev lists it
(``list_pending_agent_permissions_kandev``, kandev-permissions.md §2).

Domain types, shared by every layer; :class:`ToolOption` and :class:`ToolAction` are also
Kandev's wire shape (kandev_slack/kandev/approvals/wire.py reads them). Only the list's
**redacted**
``action`` is kept: never the transcript's tool-call title, which keeps secrets Kandev removed
from the list (a URL's ``?token=…``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kandev_slack.core.pending import ItemKind

ALWAYS_KINDS = frozenset({"allow_always", "reject_always"})
ALLOW_KINDS = frozenset({"allow_once", "allow_always"})
REJECT_KINDS = frozenset({"reject_once", "reject_always"})
#: The option id Kandev records for the web UI's cancel (nobody chose).
CANCELLED_OPTION = "cancelled"
#: Kandev (v0.95.1) passes on at most this many bytes (UTF-8) of a command, a path or a
#: destination, cut at a character boundary without a mark, and then says ``redacted``: what
#: follows is not known to the bot at all (observed on the wire: a 7,000 character command
#: listed as its first 4,096 bytes, in the list and in the transcript alike).
KANDEV_CUT_BYTES = 4096
#: The card key of an approval: Kandev's request id behind this prefix (a bundle's key is its
#: own pending id, a UUID, so the two never meet).
APPROVAL_PREFIX = "perm:"


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class ToolOption(_Wire):
    """One option the agent offered, passed through by Kandev unchanged."""

    option_id: str = Field(min_length=1)
    name: str = ""
    #: ``allow_once`` / ``allow_always`` / ``reject_once`` / ``reject_always`` (ACP's kinds; a
    #: custom option has its own id and name but one of these kinds).
    kind: str = ""

    @property
    def always(self) -> bool:
        """An "always" option: the agent remembers it beyond this request."""
        return self.kind in ALWAYS_KINDS

    @property
    def allows(self) -> bool:
        return self.kind in ALLOW_KINDS

    @property
    def label(self) -> str:
        """What its button says: the agent's name for it, else its id."""
        return " ".join(self.name.split()) or self.option_id


class ToolAction(_Wire):
    """What the agent wants to do: Kandev's allowlisted, redacted projection of the tool call.
    ``type`` is ``command`` (``command``, ``cwd``), ``file_write`` / ``file_read`` (``path``)
    or ``network`` (``destination``); ``description`` is the redacted title."""

    type: str = ""
    redacted: bool = False  # Kandev removed secrets from it
    description: str = ""
    # what the type names: a command and its directory, a path, or a network destination
    command: str = ""
    cwd: str = ""
    path: str = ""
    destination: str = ""

    @property
    def cut_by_kandev(self) -> bool:
        """Whether Kandev cut what it passed on (its end is unknown here): redacted, and a
        field as long as Kandev's cut (within one UTF-8 character of it)."""
        fields = (self.command, self.cwd, self.path, self.destination)
        return self.redacted and any(
            len(f.encode("utf-8", "surrogatepass")) > KANDEV_CUT_BYTES - 4 for f in fields
        )

    @field_validator("type", "description", "command", "cwd", "path", "destination", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return "" if value is None else value


class Approval(_Wire):
    """One live tool-permission request, as the bot keeps it with its card.

    ``cancellation_revision``: the session's cancellation revision when the request was first
    seen (None: not known). A later revision means the turn that asked may have been
    cancelled, and resolving its request would wedge the session (Kandev's bug, contract §5).
    """

    #: Tells a stored approval from a stored bundle (both are kept as a card's item).
    type: Literal["approval"] = "approval"
    task_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    request_id: str = Field(min_length=1)
    #: agentctl's id of the request (``<acp session>-<toolCallId>-<nanos>``), sent back as is.
    pending_id: str = Field(min_length=1)
    created_at: datetime
    action: ToolAction = Field(default_factory=ToolAction)
    options: tuple[ToolOption, ...] = Field(min_length=1)
    cancellation_revision: int | None = None

    def option(self, option_id: str) -> ToolOption | None:
        return next((o for o in self.options if o.option_id == option_id), None)

    def may_allow_here(self, option_id: str) -> bool:
        """Whether ``option_id`` may be chosen from Slack: any option, except that what
        Kandev cut (:attr:`ToolAction.cut_by_kandev`) is never allowed unseen."""
        option = self.option(option_id)
        return option is not None and not (option.allows and self.action.cut_by_kandev)

    def allows(self, option_id: str, option_kind: str = "") -> bool:
        """Whether choosing ``option_id`` allows the tool call (``option_kind``: as Kandev
        recorded it; else the offered option's)."""
        option = self.option(option_id)
        return (option_kind or (option.kind if option is not None else "")) in ALLOW_KINDS

    # ---- as a pending item (kandev_slack.core.pending.PendingItem)
    # ----------------------------------

    @property
    def kind(self) -> ItemKind:
        return ItemKind.APPROVAL

    @property
    def item_id(self) -> str:
        return approval_key(self.request_id)

    @property
    def headline(self) -> str:
        """What the agent wants to do, in one line: what the action names (the command, the
        path, the destination: what would be allowed, not only the agent's description of
        it), else the redacted description."""
        a = self.action
        text = a.command or a.path or a.destination or a.description or "use a tool"
        return " ".join(text.split())


def approval_key(request_id: str) -> str:
    """The card key of the approval of Kandev's request ``request_id``."""
    return APPROVAL_PREFIX + request_id
