"""quiet hours: people's own quiet hours, and what is held meanwhile for one summary"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0018", "0015"


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


downgrade = forward_only
