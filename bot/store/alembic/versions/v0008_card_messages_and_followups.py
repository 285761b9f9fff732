"""a bundle's other messages (escalation, DM cards) and its reminders"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.ddl import Timestamp, forward_only

revision, down_revision = "0008", "0007"


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


downgrade = forward_only
