"""a bundle's other messages (escalation, DM cards) and its reminders"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only, optional, required

revision, down_revision = "0008", "0007"


def upgrade() -> None:
    op.create_table(
        "card_messages",
        sa.Column("key", sa.String, primary_key=True),
        *required(sa.String, "pending_id", "kind", "target"),
        *optional(sa.String, "channel", "ts"),
        *required(sa.Text, "note"),
        *required(Timestamp, "created_at"),
        *optional(Timestamp, "posted_at"),
        sa.UniqueConstraint("channel", "ts", name="uq_card_messages_message"),
    )
    op.create_index("ix_card_messages_pending", "card_messages", ["pending_id"])
    op.create_table(
        "card_followups",
        sa.Column("pending_id", sa.String, primary_key=True),
        *required(sa.Integer, "reminders_sent", "escalated"),
        *required(Timestamp, "updated_at"),
    )


downgrade = forward_only
