"""personal notifications: subscriptions"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0009", "0008"


def upgrade() -> None:
    op.add_column(
        "card_followups",
        sa.Column("notified", sa.Integer, nullable=False, server_default=sa.text("0")),
    )
    op.create_table(
        "subscriptions",
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("kind", sa.String, primary_key=True),
        sa.Column("value", sa.String, primary_key=True),
        sa.Column("created_at", Timestamp, nullable=False),
    )


downgrade = forward_only
