"""cards and audit log"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import (
    Id,
    Timestamp,
    create_unposted_index,
    forward_only,
    optional,
    required,
)

revision, down_revision = "0001", None


def upgrade() -> None:
    # ``schema_version``: the version record of kandev-slack before Alembic, kept in step with
    # alembic_version (see kandev_slack/store/migrations.py); a database of that code already has
    # it.
    op.create_table(
        "schema_version",
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("description", sa.String, nullable=False),
        sa.Column("applied_at", Timestamp, nullable=False),
        if_not_exists=True,
    )
    op.create_table(
        "cards",
        sa.Column("pending_id", sa.String, primary_key=True),
        *required(sa.String, "task_id", "session_id", "workspace_id", "channel"),
        *optional(sa.String, "ts"),
        *required(sa.String, "state"),
        *required(sa.Text, "bundle_json", "task_json"),
        *optional(sa.Text, "outcome_json"),
        *required(Timestamp, "claimed_at"),
        *optional(Timestamp, "posted_at", "resolved_at"),
        *required(Timestamp, "created_at", "updated_at"),
        sa.UniqueConstraint("channel", "ts", name="uq_cards_message"),
    )
    op.create_index("ix_cards_state_created", "cards", ["state", "created_at"])
    # The next two (and ix_audit_log_at) came with the tables before version 5 added them.
    create_unposted_index()
    op.create_index("ix_cards_resolved", "cards", ["resolved_at"])
    op.create_table(
        "audit_log",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        *required(Timestamp, "at"),
        *optional(sa.String, "pending_id"),
        *required(sa.String, "user_id", "action", "source", "result"),
        *required(sa.Text, "detail"),
    )
    op.create_index("ix_audit_log_pending", "audit_log", ["pending_id", "id"])
    op.create_index("ix_audit_log_at", "audit_log", ["at"])


downgrade = forward_only
