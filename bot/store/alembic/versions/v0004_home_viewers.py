"""who opened the App Home tab recently

Revision ID: 0004
Revises: 0003
Released as schema version 4 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# The DDL of the store's UTCDateTime: timestamptz on PostgreSQL, DATETIME on SQLite.
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "home_viewers",
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("opened_at", Timestamp, nullable=False),
    )
    op.create_index("ix_home_viewers_opened", "home_viewers", ["opened_at"])


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
