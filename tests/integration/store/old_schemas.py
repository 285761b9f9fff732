"""The schema as the hand-written migrations before Alembic built it: test data, frozen.

A copy of ``kandev_slack/store/schema.py`` and ``kandev_slack/store/migrations.py`` as released
with schema
version 10 (the last before Alembic). :func:`build` makes a database exactly as that code did
when it stopped at ``version`` (its own ``schema_version`` table included), so the upgrade from
every released version can be tested. Never edit it to follow the live schema.
"""

from __future__ import annotations

from collections.abc import Callable
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
    insert,
    text,
)
from sqlalchemy.engine import Connection

from kandev_slack.store.sql.engine import WRITE_OPTION
from kandev_slack.store.sql.types import UTCDateTime, utc_now

metadata = MetaData()

# A big integer on PostgreSQL; on SQLite only INTEGER PRIMARY KEY is the auto-incrementing rowid.
_Id = BigInteger().with_variant(Integer(), "sqlite")

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("description", String, nullable=False),
    Column("applied_at", UTCDateTime, nullable=False),
)

cards = Table(
    "cards",
    metadata,
    Column("pending_id", String, primary_key=True),  # the unique key of the posting claim
    Column("task_id", String, nullable=False),
    Column("session_id", String, nullable=False),
    Column("workspace_id", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("ts", String),  # NULL while claimed but not (known to be) posted
    Column("state", String, nullable=False),
    Column("bundle_json", Text, nullable=False),
    Column("task_json", Text, nullable=False),
    Column("outcome_json", Text),
    Column("claimed_at", UTCDateTime, nullable=False),
    Column("posted_at", UTCDateTime),
    Column("resolved_at", UTCDateTime),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # Schema version 7: the bundle's normalised questions and workspace (past answers to the
    # same questions are found by it), and the past answer shown on the card.
    Column("question_key", String),
    Column("past_json", Text),
    UniqueConstraint("channel", "ts", name="uq_cards_message"),
    Index("ix_cards_state_created", "state", "created_at"),
)

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime, nullable=False),
    Column("pending_id", String),
    Column("user_id", String, nullable=False),
    Column("action", String, nullable=False),
    Column("source", String, nullable=False),
    Column("result", String, nullable=False),
    Column("detail", Text, nullable=False),
    Index("ix_audit_log_pending", "pending_id", "id"),
)

submissions = Table(
    "submissions",
    metadata,
    Column("submission_key", String, primary_key=True),
    Column("pending_id", String, nullable=False),
    Column("user_id", String, nullable=False),
    Column("payload_json", Text, nullable=False),
    Column("result_json", Text),
    Column("created_at", UTCDateTime, nullable=False),
    Column("leased_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    Column("resends", Integer, nullable=False, server_default="0"),  # crash-recovery re-sends
    Index("ix_submissions_pending", "pending_id"),
    Index("ix_submissions_unfinished", "finished_at", "leased_at"),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("kind", String, nullable=False),
    Column("dedupe_key", String, unique=True),  # NULL: never deduplicated
    Column("channel", String),
    Column("payload_json", Text, nullable=False),
    Column("status", String, nullable=False),  # pending | done | failed
    Column("attempts", Integer, nullable=False),
    Column("not_before", UTCDateTime, nullable=False),
    Column("lease_owner", String),
    Column("lease_until", UTCDateTime),
    Column("last_error", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    # Schema version 10: the posting slot of its channel this item holds (see pace.py), or NULL.
    Column("slot_at", UTCDateTime),
    Index("ix_outbox_due", "status", "not_before"),
)

# Indexes added by schema version 5 (see migrations.py): the periodic lookup of claims that
# never became a message (``ts IS NULL``: a partial index, so it stays small), retention
# (resolved cards, audit entries and finished outbox rows by age) and the lease heartbeat.
ix_cards_unposted = Index(
    "ix_cards_unposted",
    cards.c.claimed_at,
    sqlite_where=cards.c.ts.is_(None),
    postgresql_where=cards.c.ts.is_(None),
)
ix_cards_resolved = Index("ix_cards_resolved", cards.c.resolved_at)
ix_audit_log_at = Index("ix_audit_log_at", audit_log.c.at)
ix_outbox_finished = Index("ix_outbox_finished", outbox.c.status, outbox.c.finished_at)
ix_outbox_lease_owner = Index("ix_outbox_lease_owner", outbox.c.lease_owner)
VERSION_5_INDEXES = (
    ix_cards_unposted,
    ix_cards_resolved,
    ix_audit_log_at,
    ix_outbox_finished,
    ix_outbox_lease_owner,
)

# Added by schema version 7: earlier answers to the same questions in the same channel.
ix_cards_question = Index(
    "ix_cards_question", cards.c.question_key, cards.c.channel, cards.c.resolved_at
)

# Added by schema version 10: every replica's posts to one channel share one pace (Slack allows
# about one message per second per channel). ``free_at``: before this moment (less a tolerance)
# no message may go; ``cards_at`` / ``follows_at``: the end of the queue of card posts / of the
# other messages (copies, thread replies), each waiting item holding its slot in outbox.slot_at.
channel_pace = Table(
    "channel_pace",
    metadata,
    Column("channel", String, primary_key=True),
    Column("free_at", UTCDateTime, nullable=False),
    Column("cards_at", UTCDateTime, nullable=False),
    Column("follows_at", UTCDateTime, nullable=False),
)

home_viewers = Table(
    "home_viewers",
    metadata,
    Column("user_id", String, primary_key=True),  # a Slack user who opened the App Home tab
    Column("opened_at", UTCDateTime, nullable=False),  # the last time they did
    Index("ix_home_viewers_opened", "opened_at"),
)

# A bundle's Slack messages besides its channel card (``cards.channel/ts``): escalation cards
# and subscribers' DM cards. Each is edited to the same outcome as the channel card.
card_messages = Table(
    "card_messages",
    metadata,
    Column("key", String, primary_key=True),  # one message per key, e.g. "escalation:<pending>"
    Column("pending_id", String, nullable=False),
    Column("kind", String, nullable=False),  # escalation | dm
    Column("target", String, nullable=False),  # the channel id or user id it is posted to
    Column("channel", String),  # the conversation it is in (a DM's D… id), once known
    Column("ts", String),  # NULL until posted
    Column("note", Text, nullable=False),  # what the copy says above the card (escalation)
    Column("created_at", UTCDateTime, nullable=False),
    Column("posted_at", UTCDateTime),
    UniqueConstraint("channel", "ts", name="uq_card_messages_message"),
    Index("ix_card_messages_pending", "pending_id"),
)

# Follow-ups of a waiting card: how many reminders were sent, and whether it was escalated.
# A step is claimed by a compare-and-set on these columns, so it happens once across replicas.
card_followups = Table(
    "card_followups",
    metadata,
    Column("pending_id", String, primary_key=True),
    Column("reminders_sent", Integer, nullable=False),
    Column("escalated", Integer, nullable=False),  # 0 | 1
    Column("updated_at", UTCDateTime, nullable=False),
    # 0 | 1: its subscribers' DM cards were decided (schema version 9)
    Column("notified", Integer, nullable=False, server_default="0"),
)

# Personal notifications: who wants a DM card for which new bundles (``kind`` all | workspace |
# label; ``value`` the workspace name or id / the label, empty for all).
subscriptions = Table(
    "subscriptions",
    metadata,
    Column("user_id", String, primary_key=True),
    Column("kind", String, primary_key=True),
    Column("value", String, primary_key=True),
    Column("created_at", UTCDateTime, nullable=False),
)


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


LAST_VERSION = MIGRATIONS[-1].version

_PG_LOCK_SQL = text(
    "SELECT pg_advisory_xact_lock("
    "hashtext('kandev-slack schema ' || coalesce(current_schema(), '')))"
)


def build(engine: Engine, version: int) -> None:
    """Create (in an empty database) the schema of released ``version``, recorded the old way."""
    with engine.connect() as conn:
        conn.execution_options(**{WRITE_OPTION: True})
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(_PG_LOCK_SQL)
            schema_version.create(conn, checkfirst=True)
            for step in MIGRATIONS[:version]:
                step.apply(conn)
                conn.execute(
                    insert(schema_version).values(
                        version=step.version, description=step.description, applied_at=utc_now()
                    )
                )
