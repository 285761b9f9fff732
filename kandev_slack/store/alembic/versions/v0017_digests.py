"""digests: a person's digest time, and one row per digest target and local date sent"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0017", "0016"


def upgrade() -> None:
    op.create_table(
        "digest_settings",
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("at", sa.String, nullable=False),
        sa.Column("set_at", Timestamp, nullable=False),
    )
    op.create_table(
        "digests_sent",
        sa.Column("target", sa.String, primary_key=True),
        sa.Column("local_date", sa.String, primary_key=True),
        sa.Column("sent_at", Timestamp, nullable=False),
        sa.Column("item_count", sa.Integer, nullable=False),
    )


downgrade = forward_only
