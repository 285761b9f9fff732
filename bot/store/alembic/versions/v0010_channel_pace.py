"""posting slots per channel shared by replicas"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.ddl import Timestamp, forward_only

revision, down_revision = "0010", "0009"


def upgrade() -> None:
    op.add_column("outbox", sa.Column("slot_at", Timestamp))
    op.create_table(
        "channel_pace",
        sa.Column("channel", sa.String, primary_key=True),
        sa.Column("free_at", Timestamp, nullable=False),
        sa.Column("cards_at", Timestamp, nullable=False),
        sa.Column("follows_at", Timestamp, nullable=False),
    )


downgrade = forward_only
