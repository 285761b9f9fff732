"""indexes for retention, unposted claims and lease renewal"""

from __future__ import annotations

from alembic import op

from kandev_slack.store.sql.ddl import create_unposted_index, forward_only

revision, down_revision = "0005", "0004"


def upgrade() -> None:
    # A database created at version 1..4 by a later release already has them (they came with
    # its tables), one from an earlier release has not.
    create_unposted_index(if_not_exists=True)
    op.create_index("ix_cards_resolved", "cards", ["resolved_at"], if_not_exists=True)
    op.create_index("ix_audit_log_at", "audit_log", ["at"], if_not_exists=True)
    op.create_index("ix_outbox_finished", "outbox", ["status", "finished_at"], if_not_exists=True)
    op.create_index("ix_outbox_lease_owner", "outbox", ["lease_owner"], if_not_exists=True)


downgrade = forward_only
