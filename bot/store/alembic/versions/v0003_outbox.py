"""outbox of pending Slack writes"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.ddl import Id, Timestamp, forward_only

revision, down_revision = "0003", "0002"


def upgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String, nullable=False),
        sa.Column("dedupe_key", sa.String, unique=True),
        sa.Column("channel", sa.String),
        sa.Column("payload_json", sa.Text, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("not_before", Timestamp, nullable=False),
        sa.Column("lease_owner", sa.String),
        sa.Column("lease_until", Timestamp),
        sa.Column("last_error", sa.Text, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("finished_at", Timestamp),
    )
    op.create_index("ix_outbox_due", "outbox", ["status", "not_before"])
    # These two came with the table before version 5 added them.
    op.create_index("ix_outbox_finished", "outbox", ["status", "finished_at"])
    op.create_index("ix_outbox_lease_owner", "outbox", ["lease_owner"])


downgrade = forward_only
