"""Cards of several kinds in one table, read by replicas of several releases at once.

**Older releases.** A release before schema version 15 has no kind columns. What it selects:
waiting cards by ``state = 'pending'`` (its reconciler, reminders, listing, Home), resolved ones
by ``state <> 'pending'`` (Home, the purge), claims left unposted by ``ts IS NULL AND
claimed_at <= …`` and due Slack writes by ``outbox.status = 'pending'``. One before approvals
were stored (schema version 12 or older) reads every card as a question bundle (an approval as
an empty one, whose card it then ended "Unavailable"). So a card of a kind outside the table
``legacy_kinds`` (the kinds every older release that may run here knows, filled once by schema
version 15: 'question', and 'approval' unless the database was upgraded from a release before
approvals were stored) waits with ``state`` and ``claimed_at`` NULL, and its outbox rows wait
with ``status`` NULL: SQL's NULL satisfies none of those conditions, so such a release never
selects them. Once resolved, the card has its terminal state like any other. A release that
stores approvals reads a NULL state as no state at all (each of its cycles failed on one), so
beside it approvals wait as 'pending', as it stores them itself; its rows say kind 'question'
(the column's default) whatever they hold, and a trigger of version 15 stores the kind their
key says.

**Newer releases.** Every card and outbox row says its item's kind (``cards.kind``,
``outbox.item_kind``); this release selects only the kinds it knows (:data:`KNOWN`): a card of
a newer kind is never ended, edited, reposted or purged here, and /healthz says it is there
(:func:`unknown_here`), as it says when the database's schema is newer than this release's.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, case, exists, func, null, or_, select
from sqlalchemy.engine import Connection

from kandev_slack.core.domain import CardState
from kandev_slack.core.pending import KNOWN_KINDS
from kandev_slack.store.schema import cards, legacy_kinds, outbox

_PENDING = CardState.PENDING.value

#: Cards of a kind this release knows.
KNOWN: ColumnElement[bool] = cards.c.kind.in_(sorted(KNOWN_KINDS))
#: The ``item_kind`` of an outbox row that writes no card (a quiet-hours summary, a gathering
#: DM): no older release knows it (its status is NULL, and a release of schema version 15 to
#: 17 takes only its card kinds), so only a release that knows these writes makes them.
NOTICE = "notice"
#: Outbox rows of the cards of a kind this release knows, and its notices.
KNOWN_WRITES: ColumnElement[bool] = outbox.c.item_kind.in_([*sorted(KNOWN_KINDS), NOTICE])


def _legacy(kind: str | ColumnElement[Any]) -> ColumnElement[bool]:
    """``kind`` is known to every older release that may run here (``legacy_kinds``)."""
    return exists().where(legacy_kinds.c.kind == kind)


def waiting_state(kind: str) -> ColumnElement[Any]:
    """The ``state`` (or outbox ``status``) a waiting card of ``kind`` is stored with: NULL
    for a kind an older release that may run here does not know."""
    return case((_legacy(kind), _PENDING), else_=null())


def claimed_at(kind: str, now: ColumnElement[Any]) -> ColumnElement[Any]:
    """The ``claimed_at`` a new card of ``kind`` is stored with: NULL as its state."""
    return case((_legacy(kind), now), else_=null())


def waiting_any_kind() -> ColumnElement[bool]:
    """Waiting cards of any kind (index ``ix_cards_state_created``; it names no column newer
    than version 1, so ``kandev-slack db status`` counts them on a database not upgraded yet)."""
    return or_(cards.c.state == _PENDING, cards.c.state.is_(None))


def in_state(state: CardState) -> ColumnElement[bool]:
    """Cards of a known kind in ``state`` (waiting: stored as 'pending' or NULL)."""
    if state is CardState.PENDING:
        return and_(KNOWN, waiting_any_kind())
    return and_(KNOWN, cards.c.state == state.value)


def resolved() -> ColumnElement[bool]:
    """Cards of a known kind in a terminal state (a NULL state is a waiting one)."""
    return and_(KNOWN, cards.c.state != _PENDING)


def write_waiting() -> ColumnElement[bool]:
    """Outbox rows not done yet, of the cards of a known kind."""
    return and_(KNOWN_WRITES, or_(outbox.c.status == _PENDING, outbox.c.status.is_(None)))


def write_waiting_status() -> ColumnElement[Any]:
    """The status an outbox row made due again is stored with (per its card's kind)."""
    return case((_legacy(outbox.c.item_kind), _PENDING), else_=null())


def unknown_here(conn: Connection) -> str | None:
    """What the database holds that this release does not know, in one sentence (None: all
    known): waiting cards of a newer kind. They are left alone."""
    rows = conn.execute(
        select(cards.c.kind, func.count())
        .where(waiting_any_kind(), ~KNOWN)
        .group_by(cards.c.kind)
        .order_by(cards.c.kind)
    ).all()
    if not rows:
        return None
    found = ", ".join(f"{count} {kind}" for kind, count in rows)
    return f"cards of kinds this release does not know, left alone: {found}"
