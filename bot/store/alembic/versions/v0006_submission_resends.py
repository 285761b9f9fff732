"""how often crash recovery re-sent a submission

Revision ID: 0006
Revises: 0005
Released as schema version 6 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "submissions",
        sa.Column("resends", sa.Integer, nullable=False, server_default=sa.text("0")),
    )


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
