"""Schema versions: an ordered list of steps, applied once each, recorded in ``schema_version``.

``migrate`` runs at every start-up. It is idempotent (applied steps are skipped) and safe when
several processes start at once: on PostgreSQL the whole upgrade runs in one transaction under a
transaction-scoped advisory lock (per schema); on SQLite under ``BEGIN IMMEDIATE``. DDL is
transactional on both, so a failed step leaves the previous version intact.

Rule for future changes: a step is never edited once released. To change a table, add a step
(ALTER ...) and, if the step that created it uses the live definition from schema.py, freeze a
copy of the old definition for that earlier step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Column,
    Engine,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.engine import Connection

from bot.store.engine import WRITE_OPTION
from bot.store.errors import StoreError
from bot.store.schema import (
    VERSION_5_INDEXES,
    audit_log,
    card_messages,
    cards,
    channel_pace,
    home_viewers,
    ix_cards_question,
    outbox,
    schema_version,
    submissions,
    subscriptions,
)
from bot.store.types import UTCDateTime, utc_now


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    apply: Callable[[Connection], None]


def _create(*tables: Table) -> Callable[[Connection], None]:
    def apply(conn: Connection) -> None:
        for table in tables:
            table.create(conn)

    return apply


def _index(*indexes: Index) -> Callable[[Connection], None]:
    """Create indexes that a database created at this version already got with its tables
    (the earlier steps create them from the live definitions), hence ``checkfirst``."""

    def apply(conn: Connection) -> None:
        for index in indexes:
            index.create(conn, checkfirst=True)

    return apply


# ``cards`` as step 1 creates it (step 7 adds ``question_key`` and ``past_json``). Until step 7
# step 1 used the live definition, which carried the indexes step 5 adds for older databases.
_cards_v1 = Table(
    "cards",
    MetaData(),
    Column("pending_id", String, primary_key=True),
    Column("task_id", String, nullable=False),
    Column("session_id", String, nullable=False),
    Column("workspace_id", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("ts", String),
    Column("state", String, nullable=False),
    Column("bundle_json", Text, nullable=False),
    Column("task_json", Text, nullable=False),
    Column("outcome_json", Text),
    Column("claimed_at", UTCDateTime, nullable=False),
    Column("posted_at", UTCDateTime),
    Column("resolved_at", UTCDateTime),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("channel", "ts", name="uq_cards_message"),
    Index("ix_cards_state_created", "state", "created_at"),
)
Index(
    "ix_cards_unposted",
    _cards_v1.c.claimed_at,
    sqlite_where=_cards_v1.c.ts.is_(None),
    postgresql_where=_cards_v1.c.ts.is_(None),
)
Index("ix_cards_resolved", _cards_v1.c.resolved_at)

# ``submissions`` as step 2 created it (step 6 adds ``resends``).
_submissions_v2 = Table(
    "submissions",
    MetaData(),
    Column("submission_key", String, primary_key=True),
    Column("pending_id", String, nullable=False),
    Column("user_id", String, nullable=False),
    Column("payload_json", Text, nullable=False),
    Column("result_json", Text),
    Column("created_at", UTCDateTime, nullable=False),
    Column("leased_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    Index("ix_submissions_pending", "pending_id"),
    Index("ix_submissions_unfinished", "finished_at", "leased_at"),
)


# ``outbox`` as step 3 created it (step 10 adds ``slot_at``).
_outbox_v3 = Table(
    "outbox",
    MetaData(),
    Column(
        "id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("kind", String, nullable=False),
    Column("dedupe_key", String, unique=True),
    Column("channel", String),
    Column("payload_json", Text, nullable=False),
    Column("status", String, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("not_before", UTCDateTime, nullable=False),
    Column("lease_owner", String),
    Column("lease_until", UTCDateTime),
    Column("last_error", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    Index("ix_outbox_due", "status", "not_before"),
)
# Until step 10 step 3 used the live definition, which carried the indexes step 5 adds.
Index("ix_outbox_finished", _outbox_v3.c.status, _outbox_v3.c.finished_at)
Index("ix_outbox_lease_owner", _outbox_v3.c.lease_owner)


def _add_channel_pace(conn: Connection) -> None:
    slot_type = UTCDateTime().compile(dialect=conn.dialect)
    conn.execute(text(f"ALTER TABLE {outbox.name} ADD COLUMN slot_at {slot_type}"))
    channel_pace.create(conn)


# ``card_followups`` as step 8 created it (step 9 adds ``notified``).
_card_followups_v8 = Table(
    "card_followups",
    MetaData(),
    Column("pending_id", String, primary_key=True),
    Column("reminders_sent", Integer, nullable=False),
    Column("escalated", Integer, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)


def _add_followups_notified(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE card_followups ADD COLUMN notified INTEGER NOT NULL DEFAULT 0"))
    subscriptions.create(conn)


def _add_submission_resends(conn: Connection) -> None:
    conn.execute(
        text(f"ALTER TABLE {submissions.name} ADD COLUMN resends INTEGER NOT NULL DEFAULT 0")
    )


def _add_card_question_key(conn: Connection) -> None:
    conn.execute(text(f"ALTER TABLE {cards.name} ADD COLUMN question_key VARCHAR"))
    conn.execute(text(f"ALTER TABLE {cards.name} ADD COLUMN past_json TEXT"))
    ix_cards_question.create(conn, checkfirst=True)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "cards and audit log", _create(_cards_v1, audit_log)),
    Migration(2, "answer submissions", _create(_submissions_v2)),
    Migration(3, "outbox of pending Slack writes", _create(_outbox_v3)),
    Migration(4, "who opened the App Home tab recently", _create(home_viewers)),
    Migration(
        5, "indexes for retention, unposted claims and lease renewal", _index(*VERSION_5_INDEXES)
    ),
    Migration(6, "how often crash recovery re-sent a submission", _add_submission_resends),
    Migration(7, "past answers: cards keyed by their normalised questions", _add_card_question_key),
    Migration(
        8,
        "a bundle's other messages (escalation, DM cards) and its reminders",
        _create(card_messages, _card_followups_v8),
    ),
    Migration(9, "personal notifications: subscriptions", _add_followups_notified),
    Migration(10, "posting slots per channel shared by replicas", _add_channel_pace),
)

SCHEMA_VERSION = MIGRATIONS[-1].version

_PG_LOCK_SQL = text(
    "SELECT pg_advisory_xact_lock("
    "hashtext('kandev-slack schema ' || coalesce(current_schema(), '')))"
)


def _check_order(steps: Sequence[Migration]) -> None:
    versions = [step.version for step in steps]
    if versions != sorted(set(versions)) or (versions and versions[0] < 1):
        raise ValueError(f"migration versions must be increasing from 1, got {versions}")


def current_version(conn: Connection) -> int:
    """The applied schema version (0 for an empty database)."""
    if not conn.dialect.has_table(conn, schema_version.name):
        return 0
    return int(conn.scalar(select(func.max(schema_version.c.version))) or 0)


def migrate(engine: Engine, steps: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the database up to the last of ``steps``; return the resulting version."""
    _check_order(steps)
    target = steps[-1].version if steps else 0
    with engine.connect() as conn:
        conn.execution_options(**{WRITE_OPTION: True})
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(_PG_LOCK_SQL)
            schema_version.create(conn, checkfirst=True)
            version = current_version(conn)
            if version > target:
                raise StoreError(
                    f"the database has schema version {version}, newer than this kandev-slack "
                    f"supports ({target}); upgrade kandev-slack or use another DATABASE_URL"
                )
            for step in steps:
                if step.version <= version:
                    continue
                step.apply(conn)
                conn.execute(
                    insert(schema_version).values(
                        version=step.version, description=step.description, applied_at=utc_now()
                    )
                )
                version = step.version
    return version
