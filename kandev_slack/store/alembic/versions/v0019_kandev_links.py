"""people's own Kandev accounts: their sealed tokens, and a click parked until they connect"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0019", "0018"


def upgrade() -> None:
    op.create_table(
        "kandev_links",
        sa.Column("slack_user_id", sa.String, primary_key=True),
        sa.Column("kandev_user_id", sa.String, nullable=False),
        sa.Column("display_name", sa.String),
        sa.Column("email", sa.String),
        sa.Column("token_sealed", sa.Text, nullable=False),
        sa.Column("linked_at", Timestamp, nullable=False),
        sa.Column("checked_at", Timestamp, nullable=False),
        sa.Column("broken_at", Timestamp),
    )
    op.create_index(
        "ix_kandev_links_kandev_user", "kandev_links", ["kandev_user_id"], if_not_exists=True
    )
    op.create_table(
        "parked_clicks",
        sa.Column("slack_user_id", sa.String, primary_key=True),
        sa.Column("pending_id", sa.String, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("parked_at", Timestamp, nullable=False),
    )


downgrade = forward_only
