"""What every Alembic revision in ``store/alembic/versions`` shares: the column types as they were
released and the refusal to downgrade.

A revision's DDL must never change once released, so these two types are frozen here rather than
derived from ``schema.py`` (which describes today's tables).
"""

from __future__ import annotations

import sqlalchemy as sa

# The DDL of the store's UTCDateTime: timestamptz on PostgreSQL, DATETIME on SQLite.
Timestamp = sa.DateTime(timezone=True)
# A big integer on PostgreSQL; on SQLite only INTEGER PRIMARY KEY auto-increments.
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def forward_only() -> None:
    """Every revision's ``downgrade``: the schema only moves forward."""
    raise NotImplementedError("kandev-slack's schema only moves forward")
