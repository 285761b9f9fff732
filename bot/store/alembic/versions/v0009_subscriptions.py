"""personal notifications: subscriptions

Revision ID: 0009
Revises: 0008
Released as schema version 9 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# The DDL of the store's UTCDateTime: timestamptz on PostgreSQL, DATETIME on SQLite.
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column(
        "card_followups",
        sa.Column("notified", sa.Integer, nullable=False, server_default=sa.text("0")),
    )
    op.create_table(
        "subscriptions",
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("kind", sa.String, primary_key=True),
        sa.Column("value", sa.String, primary_key=True),
        sa.Column("created_at", Timestamp, nullable=False),
    )


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
