"""The view models of "what is waiting": what the listing and the App Home render.

Built by the use-cases (kandev_slack/usecases/views/waiting.py,
kandev_slack/usecases/views/listing.py), rendered by
kandev_slack/surfaces/listing.py and kandev_slack/surfaces/home.py. Plain data, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Literal

from kandev_slack.core.claims import Claim
from kandev_slack.core.clarification import Bundle, ListedBundle
from kandev_slack.core.domain import Card, TaskInfo
from kandev_slack.kandev.models import Workspace

#: Where a listing page starts: (created_at, pending_id) of the last bundle before it.
PageKey = tuple[datetime, str]


@dataclass(frozen=True)
class Query:
    """A parsed filter: ``text`` as typed (one line), ``words`` casefolded ("" / () = all),
    and the ``label:…`` / ``priority:…`` terms (casefolded; every label, any priority)."""

    text: str = ""
    words: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    priorities: tuple[str, ...] = ()

    @property
    def approvals_only(self) -> bool:
        """``/kandev-questions approvals``: only the tool-permission requests."""
        return self.words in (("approvals",), ("approval",))


BadFilterKind = Literal["too_long", "empty_term", "unknown_priority"]


@dataclass(frozen=True)
class BadFilter:
    """A filter that cannot be used: what is wrong with it (``kind``) and what the words
    saying so need — ``length`` / ``limit`` (too long), ``term`` (the ``label`` / ``priority``
    whose value is empty or unknown), ``value`` and the ``known`` values."""

    kind: BadFilterKind
    length: int = 0
    limit: int = 0
    term: str = ""
    value: str = ""
    known: tuple[str, ...] = ()


ListingFailureKind = Literal["unreachable", "auth", "failed"]


@dataclass(frozen=True)
class ListingFailure:
    """Kandev could not list what is waiting: unreachable at ``kandev_url`` (no user info),
    refusing the token, or answering unexpectedly (``detail``)."""

    kind: ListingFailureKind
    kandev_url: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Waiting:
    """One bundle waiting for an answer, with its task and (when posted) its card. ``listed``:
    the bundle, or (from Kandev's whole list) what stands for it until :attr:`bundle` is read:
    a view of 1,000 decodes only the items it shows."""

    listed: Bundle | ListedBundle
    task: TaskInfo
    card: Card | None = None
    permalink: str | None = None
    #: The other items identical to this one waiting in its card's channel, that the person
    #: may answer (issue 33): listed as one row with this one (the group's first card),
    #: "3 agents". Empty for an item alone.
    others: tuple[Waiting, ...] = ()

    @property
    def count(self) -> int:
        """How many items this row stands for (a group counts as its items)."""
        return 1 + len(self.others)

    @property
    def members(self) -> tuple[Waiting, ...]:
        """The row's items, this one first."""
        return (self, *self.others)

    def claim(self, now: datetime) -> Claim | None:
        """Who is on it ("I'm on it"), while their claim holds."""
        claim = self.card.claim if self.card is not None else None
        return claim if claim is not None and claim.holds(now) else None

    @cached_property
    def bundle(self) -> Bundle:
        """The bundle, decoded (once) when it was listed undecoded."""
        listed = self.listed
        return listed.decode() if isinstance(listed, ListedBundle) else listed

    @property
    def pending_id(self) -> str:
        return self.listed.pending_id

    @property
    def created_at(self) -> datetime:
        """When Kandev created the bundle (UTC)."""
        created = self.listed.created_at
        created = created.replace(tzinfo=UTC) if created.tzinfo is None else created
        return created.astimezone(UTC)

    @property
    def key(self) -> PageKey:
        return (self.created_at, self.pending_id)


@dataclass(frozen=True)
class ListingPage:
    query: Query
    workspace: Workspace | None  # the workspace the filter named, if it named one
    items: list[Waiting]  # this page, most urgent first, then oldest first
    total: int  # everything that matches, on every page
    first: int  # 1-based position of the page's first item among ``total``
    number: int  # 1-based page number
    next_after: PageKey | None  # where the next page starts, when there is one
    workspace_names: tuple[str, ...] = ()  # for the empty state's hint
    next_rank: int = 2  # the urgency of the last item shown (0 critical, 1 high, 2 other)
    #: Where the previous page ends (the first item shown), when there is one, and its urgency.
    previous_before: PageKey | None = None
    previous_rank: int = 2
    urgent: tuple[int, int] = (0, 0)  # how many critical and high ones match, on every page
    #: The approvals waiting that match (first page only), with their cards' permalinks.
    approvals: tuple[tuple[Card, str | None], ...] = ()
    #: By an approval row's pending id, the identical approvals it stands for too (one row).
    approval_others: Mapping[str, tuple[tuple[Card, str | None], ...]] = field(default_factory=dict)
    #: How many that match the person snoozed (not listed: they are on their App Home).
    snoozed: int = 0

    @property
    def shown_count(self) -> int:
        """How many items this page shows (a group row counts as its items, as ``total``)."""
        return sum(item.count for item in self.items)
