"""a bundle's other messages (escalation, DM cards) and its reminders

Revision ID: 0008
Revises: 0007
Released as schema version 8 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# The DDL of the store's UTCDateTime: timestamptz on PostgreSQL, DATETIME on SQLite.
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "card_messages",
        sa.Column("key", sa.String, primary_key=True),
        sa.Column("pending_id", sa.String, nullable=False),
        sa.Column("kind", sa.String, nullable=False),
        sa.Column("target", sa.String, nullable=False),
        sa.Column("channel", sa.String),
        sa.Column("ts", sa.String),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("posted_at", Timestamp),
        sa.UniqueConstraint("channel", "ts", name="uq_card_messages_message"),
    )
    op.create_index("ix_card_messages_pending", "card_messages", ["pending_id"])
    op.create_table(
        "card_followups",
        sa.Column("pending_id", sa.String, primary_key=True),
        sa.Column("reminders_sent", sa.Integer, nullable=False),
        sa.Column("escalated", sa.Integer, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
    )


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
