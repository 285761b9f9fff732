"""identical items: cards keyed by their identity; a card posted in another's thread"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import forward_only

revision, down_revision = "0018", "0017"


def upgrade() -> None:
    # NULL for the cards recorded before: never grouped (their own messages, as before).
    op.add_column("cards", sa.Column("identity_key", sa.String))
    op.add_column("cards", sa.Column("thread_of", sa.String))
    op.add_column("cards", sa.Column("thread_ts", sa.String))
    op.create_index(
        "ix_cards_identity", "cards", ["identity_key", "channel", "state"], if_not_exists=True
    )
    op.create_index("ix_cards_thread_of", "cards", ["thread_of"], if_not_exists=True)


downgrade = forward_only
