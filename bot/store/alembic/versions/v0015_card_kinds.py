"""card kinds: cards and outbox rows say their item's kind; new kinds hidden from old releases"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.ddl import Timestamp, forward_only

revision, down_revision = "0015", "0014"

#: Kept as released (not imported): the approvals' card key prefix and the stored statuses.
_APPROVAL_KEY = "perm:%"
_APPROVAL_PAYLOAD = '%"pending_id": "perm:%'


def upgrade() -> None:
    # A release before this one reads every card as a question (an approval as an empty
    # bundle, which it then ended "Unavailable"): it selects waiting cards by state =
    # 'pending', resolved ones by state <> 'pending', unposted claims by claimed_at and due
    # writes by status = 'pending'. A card of another kind waits with those NULL, which
    # none of those conditions selects (bot/store/kinds.py).
    with op.batch_alter_table("cards") as batch:
        batch.add_column(sa.Column("kind", sa.String, nullable=False, server_default="question"))
        batch.alter_column("state", existing_type=sa.String, nullable=True)
        batch.alter_column("claimed_at", existing_type=Timestamp, nullable=True)
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(
            sa.Column("item_kind", sa.String, nullable=False, server_default="question")
        )
        batch.alter_column("status", existing_type=sa.String, nullable=True)
    op.execute(f"UPDATE cards SET kind = 'approval' WHERE pending_id LIKE '{_APPROVAL_KEY}'")
    op.execute(
        "UPDATE cards SET state = NULL, claimed_at = NULL "
        "WHERE kind <> 'question' AND state = 'pending'"
    )
    op.execute(
        f"UPDATE outbox SET item_kind = 'approval' WHERE payload_json LIKE '{_APPROVAL_PAYLOAD}'"
    )
    op.execute(
        "UPDATE outbox SET status = NULL WHERE item_kind <> 'question' AND status = 'pending'"
    )


downgrade = forward_only
