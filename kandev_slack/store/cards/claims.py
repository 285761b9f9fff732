"""Who is on a waiting card ("I'm on it", kandev_slack/core/claims.py): the ``claim_*`` columns of
``cards``.

Every change is one compare-and-set ``UPDATE`` on what the caller read — the holder, the start
and the paused time — that also checks, in the same statement, that the card is still waiting;
the card edits the change needs are enqueued in the outbox in the same transaction. So two
people (or two replicas) taking the same card at once end with one holder, the other told who,
and no change is ever shown without being made, or made without being shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select, update

from kandev_slack.core.claims import Claim
from kandev_slack.core.domain import Card, CardState
from kandev_slack.store.base import Repository, Sql
from kandev_slack.store.cards.card_row import card_from_row as _card
from kandev_slack.store.cards.followups import OutboxRow
from kandev_slack.store.kinds import KNOWN, in_state
from kandev_slack.store.queues.outbox import OutboxRepository
from kandev_slack.store.schema import cards

_WAITING = in_state(CardState.PENDING)


class ClaimsRepository(Repository):
    def __init__(self, sql: Sql, outbox: OutboxRepository) -> None:
        super().__init__(sql)
        self._outbox = outbox

    def claim_now(self) -> datetime:
        """The database's now (claims start and end by it, whichever replica takes them)."""
        with self._read() as conn:
            return conn.execute(select(self._now())).scalar_one()

    def claimed_card(self, pending_id: str) -> Card | None:
        with self._read() as conn:
            row = conn.execute(select(cards).where(cards.c.pending_id == pending_id, KNOWN)).first()
        return _card(row) if row is not None else None

    def lapsed_claims(self) -> list[Card]:
        """Waiting cards whose claim ran out (by the database's now), oldest claim first."""
        stmt = (
            select(cards)
            .where(
                _WAITING,
                cards.c.claim_until.is_not(None),
                cards.c.claim_until <= self._now(),
            )
            .order_by(cards.c.claim_until, cards.c.pending_id)
        )
        with self._read() as conn:
            return [_card(row) for row in conn.execute(stmt).all()]

    def next_lapse_s(self) -> float | None:
        """Seconds until the soonest claim of a waiting card runs out, by the database's clock
        (0: one ran out already); None: no waiting card is claimed."""
        now_sql = self._now()
        stmt = select(func.min(cards.c.claim_until), now_sql).where(
            _WAITING, cards.c.claim_until.is_not(None)
        )
        with self._read() as conn:
            soonest, now = conn.execute(stmt).one()
        return None if soonest is None else max((soonest - now).total_seconds(), 0.0)

    def set_claim(
        self,
        read: Card,
        claim: Claim | None,
        paused_s: float,
        writes: Sequence[OutboxRow],
    ) -> bool:
        """Replace ``read``'s claim (as it was read) by ``claim`` (None: nobody's) and its
        paused time by ``paused_s``, while the card is still waiting and nobody changed its
        claim since it was read, enqueueing ``writes``: True for exactly one of several callers
        that read the same card."""
        with self._write() as conn:
            changed = conn.execute(
                update(cards)
                .where(cards.c.pending_id == read.pending_id, _WAITING)
                .where(_as_read(read))
                .values(
                    claim_user=claim.user_id if claim else None,
                    claim_since=claim.since if claim else None,
                    claim_until=claim.until if claim else None,
                    claim_paused_s=paused_s,
                    updated_at=self._now(),
                )
            ).rowcount
            if changed != 1:
                return False
            for write in writes:
                self._outbox.outbox_insert(
                    conn, write.kind, write.key, write.payload, write.channel
                )
        return True


def _as_read(read: Card) -> Any:
    """The card's claim columns are still as ``read`` has them."""
    paused = cards.c.claim_paused_s == read.paused_s
    if read.claim is None:
        return and_(cards.c.claim_user.is_(None), paused)
    return and_(
        cards.c.claim_user == read.claim.user_id,
        cards.c.claim_since == read.claim.since,
        paused,
    )
