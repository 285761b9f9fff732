"""What every Alembic revision in ``store/alembic/versions`` shares: the column types as they were
released and the refusal to downgrade.

A revision's DDL must never change once released, so these two types are frozen here rather than
derived from ``schema.py`` (which describes today's tables).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

# The DDL of the store's UTCDateTime: timestamptz on PostgreSQL, DATETIME on SQLite.
Timestamp = sa.DateTime(timezone=True)
# A big integer on PostgreSQL; on SQLite only INTEGER PRIMARY KEY auto-increments.
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def forward_only() -> None:
    """Every revision's ``downgrade``: the schema only moves forward."""
    raise NotImplementedError("kandev-slack's schema only moves forward")


def required(kind: Any, *names: str) -> list[sa.Column[Any]]:
    """NOT NULL columns of one type, in this order."""
    return [sa.Column(name, kind, nullable=False) for name in names]


def optional(kind: Any, *names: str) -> list[sa.Column[Any]]:
    """Nullable columns of one type, in this order."""
    return [sa.Column(name, kind) for name in names]


def create_unposted_index(**options: Any) -> None:
    """The partial index of claims that never became a message (``ts IS NULL``): created with
    the cards table (version 1) by later releases, added by version 5 to older databases."""
    op.create_index(
        "ix_cards_unposted",
        "cards",
        ["claimed_at"],
        sqlite_where=sa.text("ts IS NULL"),
        postgresql_where=sa.text("ts IS NULL"),
        **options,
    )
