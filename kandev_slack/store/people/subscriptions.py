"""Personal notifications: who subscribed to which new bundles."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from kandev_slack.store.base import Repository
from kandev_slack.store.schema import subscriptions

ScopeKind = Literal["all", "workspace", "label"]


class Subscription(BaseModel):
    """One person's wish for a DM card for every new bundle in ``kind`` / ``value``."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    kind: ScopeKind
    value: str = ""  # the workspace name or id, or the label; empty for all
    created_at: datetime


class SubscriptionsMixin(Repository):
    """The subscriptions half of :class:`kandev_slack.store.cards.followups.FollowupsRepository`."""

    def subscribe(self, user_id: str, kind: ScopeKind, value: str = "") -> bool:
        """Add a subscription; False when this person had it already."""
        with self._write() as conn:
            make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            stmt = (
                make(subscriptions)
                .values(user_id=user_id, kind=kind, value=value, created_at=self._now())
                .on_conflict_do_nothing(index_elements=["user_id", "kind", "value"])
            )
            return conn.execute(stmt.returning(subscriptions.c.user_id)).first() is not None

    def unsubscribe(self, user_id: str, kind: ScopeKind | None = None, value: str = "") -> int:
        """Remove one subscription (``kind`` None: all of this person's); returns how many."""
        stmt = delete(subscriptions).where(subscriptions.c.user_id == user_id)
        if kind is not None:
            stmt = stmt.where(subscriptions.c.kind == kind, subscriptions.c.value == value)
        with self._write() as conn:
            return int(conn.execute(stmt).rowcount)

    def subscriptions_of(self, user_id: str) -> list[Subscription]:
        return self._subscriptions(subscriptions.c.user_id == user_id)

    def all_subscriptions(self) -> list[Subscription]:
        return self._subscriptions(None)

    def _subscriptions(self, where) -> list[Subscription]:
        stmt = select(subscriptions).order_by(
            subscriptions.c.user_id, subscriptions.c.kind, subscriptions.c.value
        )
        if where is not None:
            stmt = stmt.where(where)
        with self._read() as conn:
            rows = conn.execute(stmt).all()
        return [
            Subscription(user_id=r.user_id, kind=r.kind, value=r.value, created_at=r.created_at)
            for r in rows
        ]
