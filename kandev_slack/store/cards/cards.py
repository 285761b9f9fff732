"""Cards: the atomic posting claim, the Slack message it became, and its state machine."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    Update,
    and_,
    bindparam,
    exists,
    func,
    or_,
    select,
    update,
)

from kandev_slack.core.domain import (
    Card,
    CardOutcome,
    CardState,
    NewCard,
    ResolvedTask,
    TaskInfo,
)
from kandev_slack.core.groups import FirstCard, GroupPlace
from kandev_slack.core.outbox import POST
from kandev_slack.core.pending import known_kind
from kandev_slack.kinds.registry import QUESTION_LISTED, spec_of
from kandev_slack.store.base import insert_unless_exists
from kandev_slack.store.cards.card_row import card_from_row as _card
from kandev_slack.store.cards.copies import CopiesMixin
from kandev_slack.store.kinds import KNOWN, claimed_at, in_state, resolved, waiting_state
from kandev_slack.store.records import OutboxStatus
from kandev_slack.store.schema import cards, outbox

_WAITING = in_state(CardState.PENDING)
#: The hot reads, built once (their values bound when executed: kandev_slack/store/base.py
#: ``Sql.prepared`` says why).
_GET = select(cards).where(cards.c.pending_id == bindparam("pending_id"), KNOWN)
_SOURCE = cards.alias("source")


def _same_item(read: Any, current: ColumnElement[bool]) -> Select[Any]:
    """``read`` of the posted cards of one identity key in one channel that are ``current``,
    oldest first (index ``ix_cards_identity``)."""
    return (
        select(read)
        .where(
            cards.c.identity_key == bindparam("identity_key"),
            cards.c.channel == bindparam("channel"),
            cards.c.ts.is_not(None),
            cards.c.pending_id != bindparam("exclude"),
            current,
            KNOWN,
        )
        .order_by(cards.c.created_at, cards.c.pending_id)
        .limit(bindparam("limit"))
    )


_SAME_ITEM = _same_item(cards, _WAITING)
#: The same, and those resolved since the card ``since_of`` was.
_SAME_ITEM_SINCE = _same_item(
    cards,
    or_(
        _WAITING,
        cards.c.resolved_at
        >= (
            select(_SOURCE.c.resolved_at)
            .where(_SOURCE.c.pending_id == bindparam("since_of"))
            .scalar_subquery()
        ),
    ),
)
_SAME_ITEM_IDS = _same_item(cards.c.pending_id, _WAITING)
_IN_THREAD = (
    select(cards)
    .where(cards.c.thread_of == bindparam("first"), cards.c.ts.is_not(None), _WAITING, KNOWN)
    .order_by(cards.c.created_at, cards.c.pending_id)
    .limit(bindparam("limit"))
)


class CardsRepository(CopiesMixin):
    """Cards (the atomic posting claim, the message it became, its state machine) and their
    other messages (copies.py): one aggregate, keyed by ``pending_id``."""

    def record_card(self, new: NewCard) -> bool:
        """Claim ``new.item``'s card for posting in ``new.channel``: True for exactly one
        caller ever.

        One ``INSERT ... ON CONFLICT DO NOTHING`` on the primary key, so it stays exclusive
        across threads, processes and replicas. The card starts ``pending`` with ``ts`` NULL
        (stored as kandev_slack/store/kinds.py says for its kind).
        """
        now = self._now()
        kind = new.item.kind.value
        with self._write() as conn:
            stmt = insert_unless_exists(conn, cards, "pending_id").values(
                pending_id=new.item.item_id,
                task_id=new.item.task_id,
                session_id=new.item.session_id,
                workspace_id=new.task.workspace_id,
                channel=new.channel,
                ts=None,
                kind=kind,
                state=waiting_state(kind),
                bundle_json=new.item.model_dump_json(),  # the item, whichever kind
                task_json=new.task.model_dump_json(),
                outcome_json=None,
                question_key=new.question_key,
                identity_key=spec_of(new.item).identity_key(new.item, new.task.workspace_id),
                past_json=new.past.model_dump_json() if new.past is not None else None,
                claimed_at=claimed_at(kind, now),
                posted_at=None,
                resolved_at=None,
                created_at=now,
                updated_at=now,
            )
            return conn.execute(stmt.returning(cards.c.pending_id)).first() is not None

    def mark_posted(self, pending_id: str, channel: str, ts: str) -> bool:
        """Record the Slack message a claim became; False when there is no such card, or when
        another message is recorded for it already (a replica that lost its lease posted a
        second one: the first recorded stays the card)."""
        now = self._now()
        with self._write() as conn:
            stmt = (
                update(cards)
                .where(
                    cards.c.pending_id == pending_id, or_(cards.c.ts.is_(None), cards.c.ts == ts)
                )
                .values(channel=channel, ts=ts, posted_at=now, updated_at=now)
            )
            return conn.execute(stmt).rowcount == 1

    def transition(
        self, pending_id: str, to: CardOutcome, expected: CardState = CardState.PENDING
    ) -> bool:
        """Move the card from ``expected`` to ``to.state``, recording ``to``: compare-and-set.

        One ``UPDATE ... WHERE state = expected``; of concurrent callers exactly one wins.
        A card of a kind this release does not know is never changed.
        """
        if to.state is CardState.PENDING:
            raise ValueError("a card cannot transition back to pending")

        def build() -> Update:
            now = self._now()
            return (
                update(cards)
                .where(cards.c.pending_id == bindparam("card"), in_state(expected))
                .values(
                    state=bindparam("to_state"),
                    outcome_json=bindparam("to_outcome"),
                    resolved_at=now,
                    updated_at=now,
                )
            )

        stmt = self._prepared(("cards.transition", expected), build)
        values = {
            "card": pending_id,
            "to_state": to.state.value,
            "to_outcome": to.model_dump_json(),
        }
        with self._write() as conn:
            return conn.execute(stmt, values).rowcount == 1

    def get(self, pending_id: str) -> Card | None:
        """The card of ``pending_id`` (None too for a card of a kind this release does not
        know: it is left alone)."""
        with self._read() as conn:
            row = conn.execute(_GET, {"pending_id": pending_id}).first()
        return _card(row) if row else None

    def by_message(self, channel: str, ts: str) -> Card | None:
        """The card posted as message ``ts`` in ``channel`` (how Slack actions find their card)."""
        with self._read() as conn:
            row = conn.execute(
                select(cards).where(cards.c.channel == channel, cards.c.ts == ts, KNOWN)
            ).first()
        return _card(row) if row else None

    def unposted(self, older_than_s: float = 0) -> list[Card]:
        """Cards whose message is not posted (ts NULL), recorded at least ``older_than_s`` ago,
        oldest first; of the kinds this release knows. Two statements, each on the index of
        unposted cards: the cards of a kind older releases do not know have no
        ``claimed_at`` (kandev_slack/store/kinds.py), they were recorded when created."""
        before = self._ago(older_than_s)
        legacy = and_(cards.c.claimed_at.is_not(None), cards.c.claimed_at <= before)
        hidden = and_(cards.c.claimed_at.is_(None), cards.c.created_at <= before)
        with self._read() as conn:
            rows = [
                row
                for claimed in (legacy, hidden)
                for row in conn.execute(select(cards).where(cards.c.ts.is_(None), claimed)).all()
            ]
        rows.sort(key=lambda row: (row.claimed_at or row.created_at, row.pending_id))
        return [_card(row) for row in rows if known_kind(row.kind) is not None]

    def pending(self) -> list[Card]:
        """Cards in state pending (posted or not), oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                select(cards).where(_WAITING).order_by(cards.c.created_at, cards.c.pending_id)
            ).all()
        return [_card(row) for row in rows]

    def pending_tasks(self) -> dict[str, TaskInfo]:
        """The task of each card in state pending, by pending id: what the listing and Home
        join with Kandev's list (only the shown cards are then read whole, see :meth:`get`)."""
        with self._read() as conn:
            rows = conn.execute(select(cards.c.pending_id, cards.c.task_json).where(_WAITING)).all()
        return {row.pending_id: TaskInfo.model_validate_json(row.task_json) for row in rows}

    def pending_places(self) -> dict[str, GroupPlace]:
        """Where each posted, waiting card of a grouped item is (its identity key, channel and
        first card), by pending id: what the listing and Home group identical items by, in one
        read (no card is decoded)."""
        with self._read() as conn:
            rows = conn.execute(
                select(
                    cards.c.pending_id, cards.c.identity_key, cards.c.channel, cards.c.thread_of
                ).where(
                    _WAITING,
                    cards.c.identity_key.is_not(None),
                    cards.c.ts.is_not(None),
                    KNOWN,
                )
            ).all()
        return {
            row.pending_id: GroupPlace(row.identity_key, row.channel, row.thread_of) for row in rows
        }

    def pending_of_kind(self, prefix: str) -> list[Card]:
        """Pending cards whose key starts with ``prefix`` (``perm:``: the approvals), oldest
        first."""
        stmt = self._prepared(
            ("cards.pending_of_kind", prefix),
            lambda: (
                select(cards)
                .where(_WAITING, cards.c.pending_id.startswith(prefix, autoescape=True))
                .order_by(cards.c.created_at, cards.c.pending_id)
            ),
        )
        with self._read() as conn:
            rows = conn.execute(stmt).all()
        return [_card(row) for row in rows]

    def pending_ids(self) -> list[tuple[str, datetime]]:
        """``(pending_id, created_at)`` of the question cards in state pending, oldest first:
        what the reconciler checks against Kandev's list of bundles, without reading (and
        decoding) each card. Approvals are left to kandev_slack/usecases/intake/approvals.py."""
        with self._read() as conn:
            rows = conn.execute(
                select(cards.c.pending_id, cards.c.created_at)
                .where(
                    _WAITING,
                    cards.c.kind.in_(QUESTION_LISTED),
                )
                .order_by(cards.c.created_at, cards.c.pending_id)
            ).all()
        return [(row.pending_id, row.created_at) for row in rows]

    def pending_sessions(self) -> dict[str, str | None]:
        """The Kandev session of each question card in state pending, by pending id: what a
        process knows of the listed bundles before its first read of the list (so that read
        need not decode the bundles that have a card already), without decoding any card."""
        with self._read() as conn:
            rows = conn.execute(
                select(cards.c.pending_id, cards.c.session_id).where(
                    _WAITING, cards.c.kind.in_(QUESTION_LISTED)
                )
            ).all()
        return {row.pending_id: row.session_id for row in rows}

    def recent_resolved(self, limit: int = 20) -> list[ResolvedTask]:
        """Cards in a terminal state, most recently resolved first, each as its task only
        (the App Home filters them by who may see them, then reads the shown ones whole,
        :meth:`many`)."""
        with self._read() as conn:
            rows = conn.execute(
                select(cards.c.pending_id, cards.c.task_json)
                .where(resolved())
                .order_by(cards.c.resolved_at.desc(), cards.c.pending_id)
                .limit(limit)
            ).all()
        return [
            ResolvedTask(row.pending_id, TaskInfo.model_validate_json(row.task_json))
            for row in rows
        ]

    def many(self, pending_ids: list[str]) -> list[Card]:
        """The cards of ``pending_ids``, in that order (those it does not know left out)."""
        if not pending_ids:
            return []
        with self._read() as conn:
            rows = conn.execute(
                select(cards).where(cards.c.pending_id.in_(pending_ids), KNOWN)
            ).all()
        found = {row.pending_id: row for row in rows}
        return [_card(found[p]) for p in pending_ids if p in found]

    def answered_like(
        self, question_key: str, channel: str, *, exclude: str = "", limit: int = 20
    ) -> list[Card]:
        """Answered cards with the same normalised questions in ``channel``, most recently
        answered first (index ``ix_cards_question``)."""
        with self._read() as conn:
            rows = conn.execute(
                select(cards)
                .where(
                    cards.c.question_key == question_key,
                    cards.c.channel == channel,
                    in_state(CardState.ANSWERED),
                    cards.c.pending_id != exclude,
                )
                .order_by(cards.c.resolved_at.desc(), cards.c.pending_id)
                .limit(limit)
            ).all()
        return [_card(row) for row in rows]

    def same_item(
        self,
        identity_key: str,
        channel: str,
        *,
        exclude: str = "",
        resolved_since_of: str | None = None,
        limit: int = 50,
    ) -> list[Card]:
        """Posted cards of identical items in ``channel`` that wait — and, with
        ``resolved_since_of``, those resolved since that card was (by the database's clock) —
        oldest first (index ``ix_cards_identity``): a group of identical items."""
        since = resolved_since_of is not None
        stmt = _SAME_ITEM_SINCE if since else _SAME_ITEM
        values: dict[str, Any] = {
            "identity_key": identity_key,
            "channel": channel,
            "exclude": exclude,
            "limit": limit,
        }
        if since:
            values["since_of"] = resolved_since_of
        with self._read() as conn:
            rows = conn.execute(stmt, values).all()
        return [_card(row) for row in rows]

    def same_item_ids(
        self, identity_key: str, channel: str, *, exclude: str = "", limit: int = 50
    ) -> list[str]:
        """The ids of :meth:`same_item`'s waiting cards, oldest first, none read whole: whom a
        won answer's offer names (a crowd answering one group offers each person the rest)."""
        with self._read() as conn:
            values = {"identity_key": identity_key, "channel": channel, "exclude": exclude}
            rows = conn.execute(_SAME_ITEM_IDS, {**values, "limit": limit}).all()
        return [row.pending_id for row in rows]

    def first_waiting(self, identity_key: str, channel: str, before: Card) -> FirstCard | None:
        """The oldest waiting card of an item identical to ``before``'s in ``channel``, recorded
        before it, that is not in another card's thread (posted or not): the card ``before``
        is posted in the thread of (None: its own message). The oldest such card is never in
        a thread itself, so every replica finds the same one. A card whose post was given up
        (its outbox row failed) is never first: its identical items would wait for it forever;
        and only its id and ts are read (a card that cannot be read back blocks nothing)."""
        given_up = exists().where(
            outbox.c.dedupe_key == POST + ":" + cards.c.pending_id,
            outbox.c.status == OutboxStatus.FAILED.value,
        )
        earlier = or_(
            cards.c.created_at < before.created_at,
            and_(
                cards.c.created_at == before.created_at,
                cards.c.pending_id < before.pending_id,
            ),
        )
        with self._read() as conn:
            row = conn.execute(
                select(cards.c.pending_id, cards.c.ts)
                .where(
                    cards.c.identity_key == identity_key,
                    cards.c.channel == channel,
                    _WAITING,
                    cards.c.thread_of.is_(None),
                    cards.c.pending_id != before.pending_id,
                    earlier,
                    KNOWN,
                    ~given_up,
                )
                .order_by(cards.c.created_at, cards.c.pending_id)
                .limit(1)
            ).first()
        return FirstCard(pending_id=row.pending_id, ts=row.ts) if row else None

    def set_thread(self, pending_id: str, first: str, first_ts: str) -> bool:
        """Record that ``pending_id``'s card is posted in the thread of ``first``'s message
        ``first_ts``; only for a card in no thread yet (False otherwise). Called by the card's
        post only (the outbox's lease on it: before its message is made)."""
        now = self._now()
        with self._write() as conn:
            stmt = (
                update(cards)
                .where(cards.c.pending_id == pending_id, cards.c.thread_of.is_(None))
                .values(thread_of=first, thread_ts=first_ts, updated_at=now)
            )
            return conn.execute(stmt).rowcount == 1

    def in_thread(self, first: str, limit: int = 50) -> list[Card]:
        """The posted cards waiting in the thread of ``first``'s card, oldest first (index
        ``ix_cards_thread_of``)."""
        with self._read() as conn:
            rows = conn.execute(_IN_THREAD, {"first": first, "limit": limit}).all()
        return [_card(row) for row in rows]

    def count(self, state: CardState | None = None) -> int:
        stmt = select(func.count()).select_from(cards).where(KNOWN)
        if state is not None:
            stmt = stmt.where(in_state(state))
        with self._read() as conn:
            return int(conn.scalar(stmt) or 0)
