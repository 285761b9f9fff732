"""claims: who is on a waiting card ("I'm on it"), and how long its follow-ups were paused"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0012", "0011"


def upgrade() -> None:
    op.add_column("cards", sa.Column("claim_user", sa.String))
    op.add_column("cards", sa.Column("claim_since", Timestamp))
    op.add_column("cards", sa.Column("claim_until", Timestamp))
    op.add_column(
        "cards", sa.Column("claim_paused_s", sa.Float, nullable=False, server_default="0")
    )


downgrade = forward_only
