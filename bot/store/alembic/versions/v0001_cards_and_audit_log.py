"""cards and audit log"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.ddl import Id, Timestamp, forward_only

revision, down_revision = "0001", None


def upgrade() -> None:
    # ``schema_version``: the version record of kandev-slack before Alembic, kept in step with
    # alembic_version (see bot/store/migrations.py); a database of that code already has it.
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
        sa.Column("task_id", sa.String, nullable=False),
        sa.Column("session_id", sa.String, nullable=False),
        sa.Column("workspace_id", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("ts", sa.String),
        sa.Column("state", sa.String, nullable=False),
        sa.Column("bundle_json", sa.Text, nullable=False),
        sa.Column("task_json", sa.Text, nullable=False),
        sa.Column("outcome_json", sa.Text),
        sa.Column("claimed_at", Timestamp, nullable=False),
        sa.Column("posted_at", Timestamp),
        sa.Column("resolved_at", Timestamp),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.UniqueConstraint("channel", "ts", name="uq_cards_message"),
    )
    op.create_index("ix_cards_state_created", "cards", ["state", "created_at"])
    # The next two (and ix_audit_log_at) came with the tables before version 5 added them.
    op.create_index(
        "ix_cards_unposted",
        "cards",
        ["claimed_at"],
        sqlite_where=sa.text("ts IS NULL"),
        postgresql_where=sa.text("ts IS NULL"),
    )
    op.create_index("ix_cards_resolved", "cards", ["resolved_at"])
    op.create_table(
        "audit_log",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("at", Timestamp, nullable=False),
        sa.Column("pending_id", sa.String),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("action", sa.String, nullable=False),
        sa.Column("source", sa.String, nullable=False),
        sa.Column("result", sa.String, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
    )
    op.create_index("ix_audit_log_pending", "audit_log", ["pending_id", "id"])
    op.create_index("ix_audit_log_at", "audit_log", ["at"])


downgrade = forward_only
