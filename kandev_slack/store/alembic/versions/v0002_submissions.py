"""answer submissions"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only, optional, required

revision, down_revision = "0002", "0001"


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("submission_key", sa.String, primary_key=True),
        *required(sa.String, "pending_id", "user_id"),
        *required(sa.Text, "payload_json"),
        *optional(sa.Text, "result_json"),
        *required(Timestamp, "created_at", "leased_at"),
        *optional(Timestamp, "finished_at"),
    )
    op.create_index("ix_submissions_pending", "submissions", ["pending_id"])
    op.create_index("ix_submissions_unfinished", "submissions", ["finished_at", "leased_at"])


downgrade = forward_only
