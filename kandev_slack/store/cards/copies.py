"""A bundle's Slack messages besides its channel card: escalation cards and DM cards.

Each row is one message, created once by its key (before it is posted) and given its
conversation and ts when the post succeeds. How a click on any of them is recognised
(:meth:`CopiesMixin.by_any_message`) and which messages a resolution must edit
(:meth:`CopiesMixin.messages_of`) both read from here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import and_, bindparam, or_, select, update

from kandev_slack.core.domain import Card
from kandev_slack.store.base import Repository, insert_unless_exists
from kandev_slack.store.cards.card_row import card_from_row as _card
from kandev_slack.store.kinds import KNOWN
from kandev_slack.store.schema import card_messages, cards, dm_gathers

#: How a click finds its card, built once (kandev_slack/store/base.py ``Sql.prepared``).
_BY_MESSAGE = select(cards).where(
    cards.c.channel == bindparam("channel"), cards.c.ts == bindparam("ts"), KNOWN
)
_BY_OTHER_MESSAGE = (
    select(cards)
    .join(card_messages, card_messages.c.pending_id == cards.c.pending_id)
    .where(
        card_messages.c.channel == bindparam("channel"),
        card_messages.c.ts == bindparam("ts"),
        KNOWN,
    )
)
_MESSAGES_OF = (
    select(card_messages)
    .where(card_messages.c.pending_id == bindparam("pending_id"))
    .order_by(card_messages.c.created_at, card_messages.c.key)
)

CopyKind = Literal["escalation", "dm"]


class Gathering(BaseModel):
    """A gathering DM (calm DMs, kandev_slack/core/timing/calm.py): ``user_id``'s burst of DM cards
    since ``since``; posted once ``ts`` is set."""

    model_config = ConfigDict(frozen=True)

    key: str
    user_id: str
    since: datetime
    last_at: datetime
    channel: str | None = None
    ts: str | None = None
    created_at: datetime


class Copy(BaseModel):
    """One more message of a bundle (the channel card itself lives in ``cards``)."""

    model_config = ConfigDict(frozen=True)

    key: str
    pending_id: str
    kind: CopyKind
    target: str  # a channel id, or a user id for a DM
    channel: str | None = None  # the conversation, once known (a DM's D… id)
    ts: str | None = None  # None until posted
    note: str = ""
    created_at: datetime
    posted_at: datetime | None = None
    #: The gathering DM (calm DMs) in whose thread it is posted; None: on its own.
    thread: str | None = None


def _message(row: Any) -> Copy:
    return Copy(**row._mapping)  # the columns of card_messages are its fields


def message_values(
    key: str, pending_id: str, kind: CopyKind, target: str, note: str, now: Any
) -> dict[str, Any]:
    """The row of a new, not yet posted message (also used inside other transactions)."""
    return {
        "key": key,
        "pending_id": pending_id,
        "kind": kind,
        "target": target,
        "channel": None,
        "ts": None,
        "note": note,
        "created_at": now,
        "posted_at": None,
        "thread": None,
    }


class CopiesMixin(Repository):
    """The copies half of :class:`kandev_slack.store.cards.cards.CardsRepository`."""

    def message_add(
        self, key: str, pending_id: str, kind: CopyKind, target: str, note: str = ""
    ) -> bool:
        """Record a message to post for ``pending_id``; False when ``key`` exists already."""
        with self._write() as conn:
            stmt = insert_unless_exists(conn, card_messages, "key").values(
                **message_values(key, pending_id, kind, target, note, self._now())
            )
            return conn.execute(stmt.returning(card_messages.c.key)).first() is not None

    def message_get(self, key: str) -> Copy | None:
        with self._read() as conn:
            row = conn.execute(select(card_messages).where(card_messages.c.key == key)).first()
        return _message(row) if row else None

    def message_opened(self, key: str, channel: str) -> bool:
        """Record the conversation a DM message goes to (before it is posted)."""
        with self._write() as conn:
            stmt = (
                update(card_messages)
                .where(card_messages.c.key == key, card_messages.c.ts.is_(None))
                .values(channel=channel)
            )
            return conn.execute(stmt).rowcount == 1

    def message_posted(self, key: str, channel: str, ts: str) -> bool:
        """Record the Slack message of ``key``; False when another one is recorded already."""
        with self._write() as conn:
            stmt = (
                update(card_messages)
                .where(
                    card_messages.c.key == key,
                    or_(card_messages.c.ts.is_(None), card_messages.c.ts == ts),
                )
                .values(channel=channel, ts=ts, posted_at=self._now())
            )
            return conn.execute(stmt).rowcount == 1

    def gather_get(self, key: str) -> Gathering | None:
        with self._read() as conn:
            row = conn.execute(select(dm_gathers).where(dm_gathers.c.key == key)).first()
        return Gathering(**row._mapping) if row else None

    def gather_posted(self, key: str, channel: str, ts: str) -> bool:
        """Record the gathering DM's message; False when another one is recorded already."""
        with self._write() as conn:
            stmt = (
                update(dm_gathers)
                .where(
                    dm_gathers.c.key == key, or_(dm_gathers.c.ts.is_(None), dm_gathers.c.ts == ts)
                )
                .values(channel=channel, ts=ts)
            )
            return conn.execute(stmt).rowcount == 1

    def gather_burst(self, gathering: Gathering) -> list[Copy]:
        """The DM cards of a gathering's burst: those that came on their own just before it
        opened, and those in its thread (oldest first)."""
        alone = and_(
            card_messages.c.kind == "dm",
            card_messages.c.thread.is_(None),
            card_messages.c.created_at <= gathering.created_at,
        )
        with self._read() as conn:
            rows = conn.execute(
                select(card_messages)
                .where(  # index ix_card_messages_target: the person's messages since then
                    card_messages.c.target == gathering.user_id,
                    card_messages.c.created_at >= gathering.since,
                    or_(alone, card_messages.c.thread == gathering.key),
                )
                .order_by(card_messages.c.created_at, card_messages.c.key)
            ).all()
        return [_message(row) for row in rows]

    def messages_of(self, pending_id: str) -> list[Copy]:
        """Every other message of ``pending_id`` (posted or not), oldest first."""
        with self._read() as conn:
            rows = conn.execute(_MESSAGES_OF, {"pending_id": pending_id}).all()
        return [_message(row) for row in rows]

    def by_any_message(self, channel: str, ts: str) -> Card | None:
        """The card whose channel card OR other message is ``ts`` in ``channel``."""
        at = {"channel": channel, "ts": ts}
        with self._read() as conn:
            row = conn.execute(_BY_MESSAGE, at).first()
            if row is None:
                row = conn.execute(_BY_OTHER_MESSAGE, at).first()
        return _card(row) if row else None
