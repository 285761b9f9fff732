"""indexes for retention, unposted claims and lease renewal

Revision ID: 0005
Revises: 0004
Released as schema version 5 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A database created at version 1..4 by a later release already has them (they came with
    # its tables), one from an earlier release has not.
    op.create_index(
        "ix_cards_unposted",
        "cards",
        ["claimed_at"],
        sqlite_where=sa.text("ts IS NULL"),
        postgresql_where=sa.text("ts IS NULL"),
        if_not_exists=True,
    )
    op.create_index("ix_cards_resolved", "cards", ["resolved_at"], if_not_exists=True)
    op.create_index("ix_audit_log_at", "audit_log", ["at"], if_not_exists=True)
    op.create_index("ix_outbox_finished", "outbox", ["status", "finished_at"], if_not_exists=True)
    op.create_index("ix_outbox_lease_owner", "outbox", ["lease_owner"], if_not_exists=True)


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
