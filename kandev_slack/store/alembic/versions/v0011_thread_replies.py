"""replies in a card's thread waiting for their author's Send"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0011", "0010"


def upgrade() -> None:
    op.create_table(
        "thread_replies",
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("message_key", sa.String, nullable=False),
        sa.Column("pending_id", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("thread_ts", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("question_id", sa.String, nullable=False),
        sa.Column("option_id", sa.String),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("state", sa.String, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.UniqueConstraint("message_key", name="uq_thread_replies_message"),
    )
    op.create_index("ix_thread_replies_created", "thread_replies", ["created_at"])


downgrade = forward_only
