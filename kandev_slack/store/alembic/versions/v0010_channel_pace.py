"""posting slots per channel shared by replicas"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only, required

revision, down_revision = "0010", "0009"


def upgrade() -> None:
    op.add_column("outbox", sa.Column("slot_at", Timestamp))
    op.create_table(
        "channel_pace",
        sa.Column("channel", sa.String, primary_key=True),
        *required(Timestamp, "free_at", "cards_at", "follows_at"),
    )


downgrade = forward_only
