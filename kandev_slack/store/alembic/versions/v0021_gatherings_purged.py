"""gathering DMs are purged with the history: an index on their last card's time"""

from __future__ import annotations

from alembic import op

from kandev_slack.store.sql.ddl import forward_only

revision, down_revision = "0021", "0020"


def upgrade() -> None:
    op.create_index("ix_dm_gathers_last", "dm_gathers", ["last_at"], if_not_exists=True)


downgrade = forward_only
