"""the audit log names the Kandev account a person acted with"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from kandev_slack.store.sql.ddl import forward_only

revision, down_revision = "0020", "0019"


def upgrade() -> None:
    op.add_column("audit_log", sa.Column("kandev_user_id", sa.String))


downgrade = forward_only
