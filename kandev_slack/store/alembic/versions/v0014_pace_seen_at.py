"""the database's now each channel's pace last saw (a clock stepped back is noticed)"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0014", "0013"


def upgrade() -> None:
    op.add_column("channel_pace", sa.Column("seen_at", Timestamp))


downgrade = forward_only
