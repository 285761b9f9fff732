"""snoozes: a person hides a waiting question from their Home, listing and DM cards until then"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0013", "0012"


def upgrade() -> None:
    op.create_table(
        "snoozes",
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("pending_id", sa.String, primary_key=True),
        sa.Column("until", Timestamp, nullable=False),
        sa.Column("hours", sa.Integer, nullable=False),
        sa.Column("token", sa.String, nullable=False),
    )
    op.create_index("ix_snoozes_until", "snoozes", ["until"])


downgrade = forward_only
