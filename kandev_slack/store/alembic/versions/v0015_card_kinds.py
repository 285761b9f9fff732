"""card kinds: cards and outbox rows say their item's kind; new kinds hidden from old releases"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

from kandev_slack.store.sql.ddl import Timestamp, forward_only

revision, down_revision = "0015", "0014"

#: Kept as released (not imported): the approvals' card key prefix and the stored statuses.
_APPROVAL_KEY = "perm:%"
_APPROVAL_PAYLOAD = '%"pending_id": "perm:%'
#: The schema version of the release that stores approvals (2f49d25, the one before this):
#: upgraded from it or later, no release that does not know approvals runs beside this one (the
#: last release before approvals, 3fb7d49, made version 10 and refuses a newer database).
_APPROVALS_STORED = 13

#: A replica of a release before this one inserts cards and outbox rows without a kind: the
#: column's default, 'question', even for an approval (its key starts with ``perm:``). These
#: triggers store the kind the key says (SQL LIKE: an approval's key has no ``%`` or ``_``).
_PG_TRIGGERS = (
    f"""
    CREATE FUNCTION cards_kind_of_key() RETURNS trigger AS $$
    BEGIN
        IF NEW.kind = 'question' AND NEW.pending_id LIKE '{_APPROVAL_KEY}' THEN
            NEW.kind := 'approval';
        END IF;
        RETURN NEW;
    END $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER cards_kind_of_key BEFORE INSERT ON cards
    FOR EACH ROW EXECUTE FUNCTION cards_kind_of_key()
    """,
    f"""
    CREATE FUNCTION outbox_kind_of_key() RETURNS trigger AS $$
    BEGIN
        IF NEW.item_kind = 'question' AND NEW.payload_json LIKE '{_APPROVAL_PAYLOAD}' THEN
            NEW.item_kind := 'approval';
        END IF;
        RETURN NEW;
    END $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER outbox_kind_of_key BEFORE INSERT ON outbox
    FOR EACH ROW EXECUTE FUNCTION outbox_kind_of_key()
    """,
)
_SQLITE_TRIGGERS = (
    f"""
    CREATE TRIGGER cards_kind_of_key AFTER INSERT ON cards
    WHEN NEW.kind = 'question' AND NEW.pending_id LIKE '{_APPROVAL_KEY}'
    BEGIN
        UPDATE cards SET kind = 'approval' WHERE pending_id = NEW.pending_id;
    END
    """,
    f"""
    CREATE TRIGGER outbox_kind_of_key AFTER INSERT ON outbox
    WHEN NEW.item_kind = 'question' AND NEW.payload_json LIKE '{_APPROVAL_PAYLOAD}'
    BEGIN
        UPDATE outbox SET item_kind = 'approval' WHERE id = NEW.id;
    END
    """,
)


def _upgraded_from() -> int | None:
    """The schema version this upgrade started at (kandev_slack.store.migrations.migrate says; None
    when Alembic is run otherwise)."""
    started = context.config.attributes.get("from_version")
    return started if isinstance(started, int) else None


def upgrade() -> None:
    # A release before this one reads every card as a question (one before approvals were
    # stored read an approval as an empty bundle, which it then ended "Unavailable"): it
    # selects waiting cards by state = 'pending', resolved ones by state <> 'pending',
    # unposted claims by claimed_at and due writes by status = 'pending'. A card of a kind
    # such a release may not know waits with those NULL, which none of those conditions
    # selects (kandev_slack/store/kinds.py). ``legacy_kinds`` lists the kinds every release
    # that may
    # still run beside this one knows.
    with op.batch_alter_table("cards") as batch:
        batch.add_column(sa.Column("kind", sa.String, nullable=False, server_default="question"))
        batch.alter_column("state", existing_type=sa.String, nullable=True)
        batch.alter_column("claimed_at", existing_type=Timestamp, nullable=True)
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(
            sa.Column("item_kind", sa.String, nullable=False, server_default="question")
        )
        batch.alter_column("status", existing_type=sa.String, nullable=True)
    legacy = op.create_table("legacy_kinds", sa.Column("kind", sa.String, primary_key=True))
    started = _upgraded_from()
    # A new database, or one a release storing approvals used (it reads a NULL state as no
    # state at all: its approvals loop failed on every cycle): approvals wait as 'pending'.
    knows_approvals = started is not None and (started == 0 or started >= _APPROVALS_STORED)
    kinds = ["question", "approval"] if knows_approvals else ["question"]
    op.bulk_insert(legacy, [{"kind": kind} for kind in kinds])
    op.execute(f"UPDATE cards SET kind = 'approval' WHERE pending_id LIKE '{_APPROVAL_KEY}'")
    op.execute(
        "UPDATE cards SET state = NULL, claimed_at = NULL WHERE state = 'pending' "
        "AND kind NOT IN (SELECT kind FROM legacy_kinds)"
    )
    op.execute(
        f"UPDATE outbox SET item_kind = 'approval' WHERE payload_json LIKE '{_APPROVAL_PAYLOAD}'"
    )
    op.execute(
        "UPDATE outbox SET status = NULL WHERE status = 'pending' "
        "AND item_kind NOT IN (SELECT kind FROM legacy_kinds)"
    )
    dialect = op.get_bind().dialect.name
    for statement in _PG_TRIGGERS if dialect == "postgresql" else _SQLITE_TRIGGERS:
        op.execute(statement)


downgrade = forward_only
