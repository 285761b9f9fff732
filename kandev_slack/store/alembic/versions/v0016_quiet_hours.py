"""quiet hours and calm DMs: people's quiet hours, what is held meanwhile, gathering DMs"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0016", "0015"


def upgrade() -> None:
    op.create_table(
        "quiet_people",
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("hours", sa.String, nullable=False),
        sa.Column("tz", sa.String, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
    )
    op.create_table(
        "held_items",
        sa.Column("key", sa.String, primary_key=True),
        sa.Column("target", sa.String, nullable=False),
        sa.Column("pending_id", sa.String, nullable=False),
        sa.Column("what", sa.String, nullable=False),
        sa.Column("release_at", Timestamp, nullable=False),
        sa.Column("released_at", Timestamp),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_index("ix_held_items_due", "held_items", ["released_at", "release_at"])
    op.create_table(
        "dm_gathers",
        sa.Column("key", sa.String, primary_key=True),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("since", Timestamp, nullable=False),
        sa.Column("last_at", Timestamp, nullable=False),
        sa.Column("channel", sa.String),
        sa.Column("ts", sa.String),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_index("ix_dm_gathers_user", "dm_gathers", ["user_id", "last_at"])
    with op.batch_alter_table("card_messages") as batch:
        batch.add_column(sa.Column("thread", sa.String))
    op.create_index("ix_card_messages_target", "card_messages", ["target", "created_at"])


downgrade = forward_only
