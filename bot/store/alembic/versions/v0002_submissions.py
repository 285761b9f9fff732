"""answer submissions"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.ddl import Timestamp, forward_only

revision, down_revision = "0002", "0001"


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("submission_key", sa.String, primary_key=True),
        sa.Column("pending_id", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("payload_json", sa.Text, nullable=False),
        sa.Column("result_json", sa.Text),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("leased_at", Timestamp, nullable=False),
        sa.Column("finished_at", Timestamp),
    )
    op.create_index("ix_submissions_pending", "submissions", ["pending_id"])
    op.create_index("ix_submissions_unfinished", "submissions", ["finished_at", "leased_at"])


downgrade = forward_only
