"""who opened the App Home tab recently"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0004", "0003"


def upgrade() -> None:
    op.create_table(
        "home_viewers",
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("opened_at", Timestamp, nullable=False),
    )
    op.create_index("ix_home_viewers_opened", "home_viewers", ["opened_at"])


downgrade = forward_only
