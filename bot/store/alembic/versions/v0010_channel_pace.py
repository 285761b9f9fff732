"""posting slots per channel shared by replicas

Revision ID: 0010
Revises: 0009
Released as schema version 10 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

# The DDL of the store's UTCDateTime: timestamptz on PostgreSQL, DATETIME on SQLite.
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("outbox", sa.Column("slot_at", Timestamp))
    op.create_table(
        "channel_pace",
        sa.Column("channel", sa.String, primary_key=True),
        sa.Column("free_at", Timestamp, nullable=False),
        sa.Column("cards_at", Timestamp, nullable=False),
        sa.Column("follows_at", Timestamp, nullable=False),
    )


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
