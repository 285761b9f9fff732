"""past answers: cards keyed by their normalised questions

Revision ID: 0007
Revises: 0006
Released as schema version 7 of the hand-written migrations; never edit it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("cards", sa.Column("question_key", sa.String))
    op.add_column("cards", sa.Column("past_json", sa.Text))
    op.create_index(
        "ix_cards_question",
        "cards",
        ["question_key", "channel", "resolved_at"],
        if_not_exists=True,
    )


def downgrade() -> None:
    raise NotImplementedError("kandev-slack's schema only moves forward")
