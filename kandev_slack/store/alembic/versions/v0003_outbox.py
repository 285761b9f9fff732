"""outbox of pending Slack writes"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import Id, Timestamp, forward_only, optional, required

revision, down_revision = "0003", "0002"


def upgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        *required(sa.String, "kind"),
        sa.Column("dedupe_key", sa.String, unique=True),
        *optional(sa.String, "channel"),
        *required(sa.Text, "payload_json"),
        *required(sa.String, "status"),
        *required(sa.Integer, "attempts"),
        *required(Timestamp, "not_before"),
        *optional(sa.String, "lease_owner"),
        *optional(Timestamp, "lease_until"),
        *required(sa.Text, "last_error"),
        *required(Timestamp, "created_at", "updated_at"),
        *optional(Timestamp, "finished_at"),
    )
    op.create_index("ix_outbox_due", "outbox", ["status", "not_before"])
    # These two came with the table before version 5 added them.
    op.create_index("ix_outbox_finished", "outbox", ["status", "finished_at"])
    op.create_index("ix_outbox_lease_owner", "outbox", ["lease_owner"])


downgrade = forward_only
