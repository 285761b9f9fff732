"""how often crash recovery re-sent a submission"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import forward_only

revision, down_revision = "0006", "0005"


def upgrade() -> None:
    op.add_column(
        "submissions",
        sa.Column("resends", sa.Integer, nullable=False, server_default=sa.text("0")),
    )


downgrade = forward_only
