"""answer submissions

Revision ID: 0002
Revises: 0001
Released as schema version 2 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

# The DDL of the store's UTCDateTime: timestamptz on PostgreSQL, DATETIME on SQLite.
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("submission_key", sa.String, primary_key=True),
        sa.Column("pending_id", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("payload_json", sa.Text, nullable=False),
        sa.Column("result_json", sa.Text),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("leased_at", Timestamp, nullable=False),
        sa.Column("finished_at", Timestamp),
    )
    op.create_index("ix_submissions_pending", "submissions", ["pending_id"])
    op.create_index("ix_submissions_unfinished", "submissions", ["finished_at", "leased_at"])


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
