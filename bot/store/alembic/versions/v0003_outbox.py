"""outbox of pending Slack writes

Revision ID: 0003
Revises: 0002
Released as schema version 3 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

# The DDL of the store's UTCDateTime: timestamptz on PostgreSQL, DATETIME on SQLite.
Timestamp = sa.DateTime(timezone=True)
# A big integer on PostgreSQL; on SQLite only INTEGER PRIMARY KEY auto-increments.
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


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


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
