"""Who opened the App Home tab recently: their Home is refreshed when cards change state."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from kandev_slack.store.base import Repository
from kandev_slack.store.schema import home_viewers


class HomeViewersRepository(Repository):
    """Who opened the App Home tab recently."""

    def home_opened(self, user_id: str) -> None:
        """Record that ``user_id`` opened the Home tab now (one row per user, last time wins)."""
        now = self._now()
        with self._write() as conn:
            make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            stmt = make(home_viewers).values(user_id=user_id, opened_at=now)
            conn.execute(
                stmt.on_conflict_do_update(index_elements=["user_id"], set_={"opened_at": now})
            )

    def home_viewers(self, since: datetime, limit: int = 100) -> list[str]:
        """Users who opened the Home tab at or after ``since``, most recent first."""
        with self._read() as conn:
            rows = conn.execute(
                select(home_viewers.c.user_id)
                .where(home_viewers.c.opened_at >= since)
                .order_by(home_viewers.c.opened_at.desc(), home_viewers.c.user_id)
                .limit(limit)
            ).all()
        return [row.user_id for row in rows]

    def forget_home_viewers(self, before: datetime) -> int:
        """Drop users who have not opened the Home tab since ``before``; returns how many."""
        with self._write() as conn:
            stmt = delete(home_viewers).where(home_viewers.c.opened_at < before)
            return conn.execute(stmt).rowcount
