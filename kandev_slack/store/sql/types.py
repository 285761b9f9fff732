"""Column types: timestamps are stored and returned as timezone-aware UTC on every backend."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


def utc_now() -> datetime:
    """The store's default clock."""
    return datetime.now(UTC)


def require_aware(value: datetime) -> datetime:
    """``value`` in UTC; a naive datetime is a programming error (its zone is unknown)."""
    if value.tzinfo is None:
        raise ValueError(f"the store only accepts timezone-aware datetimes, got {value!r}")
    return value.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """``timestamptz`` on PostgreSQL; naive-UTC text on SQLite (so text order is time order)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise ValueError(f"the store only accepts timezone-aware datetimes, got {value!r}")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
