"""Digests (kandev_slack/usecases/followups/digests.py): each person's digest time, and the
digests sent, one row per target (a person, or a route's channel) and local date.

A digest is claimed by inserting its (target, local date) row, and its post is enqueued in the
outbox in the same transaction: of several replicas (or a restart) deciding the same digest,
exactly one inserts the row, and only it enqueues the post.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from kandev_slack.core.outbox import POST_DIGEST, DigestPost
from kandev_slack.store.base import Repository, Sql
from kandev_slack.store.queues.outbox import OutboxRepository
from kandev_slack.store.schema import digest_settings, digests_sent
from kandev_slack.store.sql.types import require_aware


@dataclass(frozen=True)
class DigestSetting:
    """``user_id`` wants a digest at ``at`` (HH:MM in their zone) since ``set_at``."""

    user_id: str
    at: str
    set_at: datetime


class DigestsRepository(Repository):
    def __init__(self, sql: Sql, outbox: OutboxRepository) -> None:
        super().__init__(sql)
        self._outbox = outbox

    def digest_of(self, user_id: str) -> DigestSetting | None:
        stmt = select(digest_settings).where(digest_settings.c.user_id == user_id)
        with self._read() as conn:
            row = conn.execute(stmt).first()
        return DigestSetting(**row._mapping) if row is not None else None

    def digest_settings(self) -> list[DigestSetting]:
        """Every person's digest setting (one row per person who set one)."""
        stmt = select(digest_settings).order_by(digest_settings.c.user_id)
        with self._read() as conn:
            return [DigestSetting(**row._mapping) for row in conn.execute(stmt).all()]

    def set_digest(self, user_id: str, at: str, set_at: datetime) -> None:
        """Set (or change) the person's digest time; it counts from ``set_at`` (the digests'
        clock, which decides when one is due)."""
        now = require_aware(set_at)
        with self._write() as conn:
            make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            conn.execute(
                make(digest_settings)
                .values(user_id=user_id, at=at, set_at=now)
                .on_conflict_do_update(index_elements=["user_id"], set_={"at": at, "set_at": now})
            )

    def clear_digest(self, user_id: str) -> bool:
        """Stop the person's digest; False when none was set."""
        with self._write() as conn:
            gone = conn.execute(delete(digest_settings).where(digest_settings.c.user_id == user_id))
        return gone.rowcount == 1

    def digest_sent(self, target: str, local_date: str) -> bool:
        """Whether the digest of ``target`` for that local date was claimed already."""
        stmt = select(digests_sent.c.target).where(
            digests_sent.c.target == target, digests_sent.c.local_date == local_date
        )
        with self._read() as conn:
            return conn.execute(stmt).first() is not None

    def claim_digest(
        self, target: str, local_date: str, items: int, post: DigestPost | None
    ) -> bool:
        """Claim the digest of ``target`` for ``local_date`` and enqueue its ``post`` (None
        when nothing waits) in the same transaction: True for exactly one of several
        callers."""
        with self._write() as conn:
            make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            stmt = (
                make(digests_sent)
                .values(target=target, local_date=local_date, sent_at=self._now(), item_count=items)
                .on_conflict_do_nothing(index_elements=["target", "local_date"])
                .returning(digests_sent.c.target)
            )
            if conn.execute(stmt).first() is None:
                return False
            if post is not None:
                self._insert(conn, post)
        return True

    def enqueue_digest(self, post: DigestPost) -> bool:
        """Enqueue a digest asked for now (``digest now``: not claimed per date)."""
        with self._write() as conn:
            return self._insert(conn, post)

    def _insert(self, conn: Any, post: DigestPost) -> bool:
        payload = {"key": post.key, "target": post.target, **post.message}
        made = self._outbox.outbox_insert(conn, POST_DIGEST, post.key, payload, post.target)
        return made is not None
