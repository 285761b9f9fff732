"""Replies in a card's thread offered as an answer, waiting for their author's Send or Cancel."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from kandev_slack.store.base import Repository
from kandev_slack.store.schema import thread_replies

OFFERED, SENT, CANCELLED = "offered", "sent", "cancelled"
#: The reply's message was deleted before Send: nothing is sent.
DELETED = "deleted"


@dataclass(frozen=True)
class ThreadReply:
    """One reply offered as an answer: to which bundle's question, by whom, as which option
    (None: as free text ``text``)."""

    id: str
    message_key: str
    pending_id: str
    channel: str
    thread_ts: str
    user_id: str
    question_id: str
    option_id: str | None
    text: str
    state: str = OFFERED


class ThreadRepliesRepository(Repository):
    def offer_reply(self, reply: ThreadReply) -> tuple[ThreadReply, bool]:
        """Keep ``reply`` (its ``id`` ignored: a new one is made); the row kept for its
        message and whether it is new (False: the same message was offered before, e.g. a
        redelivered event)."""
        row = {**reply.__dict__, "id": uuid.uuid4().hex, "state": OFFERED}
        with self._write() as conn:
            make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            now = self._now()
            stmt = make(thread_replies).values(**row, created_at=now, updated_at=now)
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["message_key"]))
            kept = conn.execute(
                select(thread_replies).where(thread_replies.c.message_key == reply.message_key)
            ).one()
        # New when the row kept is the one just written (a rowcount is not portable here).
        return _reply(kept), kept.id == row["id"]

    def thread_reply(self, reply_id: str) -> ThreadReply | None:
        with self._read() as conn:
            row = conn.execute(
                select(thread_replies).where(thread_replies.c.id == reply_id)
            ).one_or_none()
        return _reply(row) if row is not None else None

    def settle_reply(self, reply_id: str, user_id: str, state: str, *, was: str = OFFERED) -> bool:
        """``was`` (offered) → ``state`` (sent, cancelled) for its author, once: False when it
        was settled before (a double click) or is not theirs. ``sent`` → ``offered`` gives a
        reply back whose Send recorded nothing (the bot was busy)."""
        with self._write() as conn:
            stmt = (
                update(thread_replies)
                .where(
                    thread_replies.c.id == reply_id,
                    thread_replies.c.user_id == user_id,
                    thread_replies.c.state == was,
                )
                .values(state=state, updated_at=self._now())
            )
            return bool(conn.execute(stmt).rowcount)

    def reply_of_message(self, message_key: str) -> ThreadReply | None:
        """The reply kept for a message (``channel:ts``), if any."""
        with self._read() as conn:
            row = conn.execute(
                select(thread_replies).where(thread_replies.c.message_key == message_key)
            ).one_or_none()
        return _reply(row) if row is not None else None

    def revise_reply(self, reply_id: str, *, text: str, option_id: str | None) -> bool:
        """The reply's message was edited while it is offered: Send sends this now (False:
        it was sent, cancelled or deleted meanwhile)."""
        with self._write() as conn:
            stmt = (
                update(thread_replies)
                .where(thread_replies.c.id == reply_id, thread_replies.c.state == OFFERED)
                .values(text=text, option_id=option_id, updated_at=self._now())
            )
            return bool(conn.execute(stmt).rowcount)

    def withdraw_reply(self, reply_id: str) -> bool:
        """The reply's message was deleted (or edited into nothing to send) while it is
        offered: Send sends nothing (False: it was settled before)."""
        with self._write() as conn:
            stmt = (
                update(thread_replies)
                .where(thread_replies.c.id == reply_id, thread_replies.c.state == OFFERED)
                .values(state=DELETED, updated_at=self._now())
            )
            return bool(conn.execute(stmt).rowcount)


_FIELDS = tuple(ThreadReply.__dataclass_fields__)


def _reply(row: Any) -> ThreadReply:
    return ThreadReply(**{name: getattr(row, name) for name in _FIELDS})
