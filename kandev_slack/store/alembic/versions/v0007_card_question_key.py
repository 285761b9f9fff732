"""past answers: cards keyed by their normalised questions"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import forward_only

revision, down_revision = "0007", "0006"


def upgrade() -> None:
    op.add_column("cards", sa.Column("question_key", sa.String))
    op.add_column("cards", sa.Column("past_json", sa.Text))
    op.create_index(
        "ix_cards_question",
        "cards",
        ["question_key", "channel", "resolved_at"],
        if_not_exists=True,
    )


downgrade = forward_only
