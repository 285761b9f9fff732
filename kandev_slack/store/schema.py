"""The tables, as of the newest schema version (the Alembic revisions in alembic/versions/
make them; see migrations.py)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from kandev_slack.store.sql.types import UTCDateTime

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
    # pending | answered | rejected | ended | unavailable; NULL: pending, for a card of a kind
    # an older release that may run here does not know (legacy_kinds;
    # kandev_slack/store/kinds.py)
    Column("state", String),
    Column("bundle_json", Text, nullable=False),  # the item: a bundle or an approval
    Column("task_json", Text, nullable=False),
    Column("outcome_json", Text),
    Column("claimed_at", UTCDateTime),  # NULL for a kind older releases do not know (as state)
    Column("posted_at", UTCDateTime),
    Column("resolved_at", UTCDateTime),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # Schema version 7: the bundle's normalised questions and workspace (past answers to the
    # same questions are found by it), and the past answer shown on the card.
    Column("question_key", String),
    Column("past_json", Text),
    # Schema version 12: who is on it ("I'm on it": kandev_slack/core/claims.py) until when, and
    # how long
    # claims that are over paused its follow-ups.
    Column("claim_user", String),
    Column("claim_since", UTCDateTime),
    Column("claim_until", UTCDateTime),
    Column("claim_paused_s", Float, nullable=False, server_default="0"),
    # Schema version 15: the item's kind (kandev_slack.core.pending.ItemKind); a replica leaves the
    # cards of a kind it does not know alone.
    Column("kind", String, nullable=False, server_default="question"),
    # Schema version 18: what identical items share (kandev_slack/kinds: ``identity_key``;
    # NULL: never grouped), and for a card posted in the thread of the first identical one
    # waiting in its channel, that card (``thread_of``) and its message (``thread_ts``).
    Column("identity_key", String),
    Column("thread_of", String),
    Column("thread_ts", String),
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
    # The Kandev account a person acted with (their own token; NULL: the bot's, or unknown).
    Column("kandev_user_id", String),
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
    # pending | done | failed; NULL: pending, for the card of a kind an older release that may
    # run here does not know (legacy_kinds; it never takes it: kandev_slack/store/kinds.py)
    Column("status", String),
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
    # Schema version 15: the kind of the card it writes (a replica takes only its known kinds).
    Column("item_kind", String, nullable=False, server_default="question"),
    Index("ix_outbox_due", "status", "not_before"),
)

# Indexes added by schema version 5 (alembic/versions/v0005): the periodic lookup of claims that
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

# Added by schema version 18: identical items waiting in one channel, and a card's thread.
ix_cards_identity = Index("ix_cards_identity", cards.c.identity_key, cards.c.channel, cards.c.state)
ix_cards_thread_of = Index("ix_cards_thread_of", cards.c.thread_of)

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
    # The database's now at the last turn (v0014): a now before it is a clock stepped back.
    Column("seen_at", UTCDateTime),
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
    # Schema version 16: the gathering DM (dm_gathers.key) in whose thread it is posted, or NULL.
    Column("thread", String),
    UniqueConstraint("channel", "ts", name="uq_card_messages_message"),
    Index("ix_card_messages_pending", "pending_id"),
    Index("ix_card_messages_target", "target", "created_at"),
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

# Replies in a card's thread offered as an answer (issue 22): kept until their author's Send or
# Cancel, the Send button carrying only ``id``. ``message_key`` (``channel:ts`` of the reply)
# makes a redelivered event offer nothing twice; ``state`` offered | sent | cancelled.
thread_replies = Table(
    "thread_replies",
    metadata,
    Column("id", String, primary_key=True),
    Column("message_key", String, nullable=False),
    Column("pending_id", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("thread_ts", String, nullable=False),
    Column("user_id", String, nullable=False),
    Column("question_id", String, nullable=False),
    Column("option_id", String),  # None: free text
    Column("text", Text, nullable=False),
    Column("state", String, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("message_key", name="uq_thread_replies_message"),
    Index("ix_thread_replies_created", "created_at"),
)

# Snoozes (issue 22): ``user_id`` hid ``pending_id`` from their own Home, listing and DM cards
# for ``hours`` until ``until``; ``token`` names this snooze (its changes and its end are a
# compare-and-set on it). Schema version 13.
snoozes = Table(
    "snoozes",
    metadata,
    Column("user_id", String, primary_key=True),
    Column("pending_id", String, primary_key=True),
    Column("until", UTCDateTime, nullable=False),
    Column("hours", Integer, nullable=False),
    Column("token", String, nullable=False),
    Index("ix_snoozes_until", "until"),
)

# The kinds every replica of a release before schema version 15 that may still run here knows
# (it selects waiting cards by state = 'pending'): a waiting card of another kind is stored
# with a NULL state (kandev_slack/store/kinds.py). Schema version 15 fills it once:
# 'question', and
# 'approval' unless the database was upgraded from a release before approvals were stored.
legacy_kinds = Table(
    "legacy_kinds",
    metadata,
    Column("kind", String, primary_key=True),
)

# Quiet hours (issue 33), schema version 16. ``quiet_people``: a person's own quiet hours
# (``hours`` as "19:00-08:00", in ``tz``, their Slack time zone when they set them).
quiet_people = Table(
    "quiet_people",
    metadata,
    Column("user_id", String, primary_key=True),
    Column("hours", String, nullable=False),
    Column("tz", String, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# What waits for quiet hours to end (a reminder, an escalation, a DM card), one row per
# ``key``: ``target`` (a channel or user id) gets one summary of its rows once ``release_at``
# passed; ``released_at`` is set by the one claim that enqueues that summary.
held_items = Table(
    "held_items",
    metadata,
    Column("key", String, primary_key=True),
    Column("target", String, nullable=False),
    Column("pending_id", String, nullable=False),
    Column("what", String, nullable=False),  # reminder | escalation | dm
    Column("release_at", UTCDateTime, nullable=False),
    Column("released_at", UTCDateTime),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_held_items_due", "released_at", "release_at"),
)

# Calm DMs: one gathering DM per burst of DM cards to one person. ``since``: the start of the
# burst (its first DM cards came on their own), ``last_at``: when its last card joined it; its
# cards are the card_messages whose ``thread`` is its key. Schema version 16.
dm_gathers = Table(
    "dm_gathers",
    metadata,
    Column("key", String, primary_key=True),
    Column("user_id", String, nullable=False),
    Column("since", UTCDateTime, nullable=False),
    Column("last_at", UTCDateTime, nullable=False),
    Column("channel", String),
    Column("ts", String),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_dm_gathers_user", "user_id", "last_at"),
    Index("ix_dm_gathers_last", "last_at"),  # the retention purge (schema version 21)
)

# Digests (issue 33): ``/kandev-questions digest 09:00`` — when a person wants theirs (in their
# Slack time zone, weekdays), set at ``set_at`` (a digest is due from then on). Schema version 17.
digest_settings = Table(
    "digest_settings",
    metadata,
    Column("user_id", String, primary_key=True),
    Column("at", String, nullable=False),  # HH:MM, wall-clock time in the person's zone
    Column("set_at", UTCDateTime, nullable=False),
)

# One row per digest target (a user id, or a channel id for a route's channel digest) and local
# date (YYYY-MM-DD in its zone): inserted atomically before the digest is enqueued, in the same
# transaction, so a date gets one digest whatever restarts, replicas or clock changes happen.
digests_sent = Table(
    "digests_sent",
    metadata,
    Column("target", String, primary_key=True),
    Column("local_date", String, primary_key=True),
    Column("sent_at", UTCDateTime, nullable=False),
    Column("item_count", Integer, nullable=False),  # items listed (0: nothing was sent)
)

# People's own Kandev accounts (issue 32), schema version 19. ``kandev_links``: the Kandev user a
# Slack person connected, with their personal access token sealed by KANDEV_SLACK_SECRET_KEY
# (kandev_slack/ops/vault.py; never in clear); ``broken_at`` once Kandev refused it (401), until
# they connect again. ``parked_clicks``: what a person not yet connected clicked where only
# connected people may act (one per person, offered again when they connect soon after).
kandev_links = Table(
    "kandev_links",
    metadata,
    Column("slack_user_id", String, primary_key=True),
    Column("kandev_user_id", String, nullable=False),
    Column("display_name", String),
    Column("email", String),
    Column("token_sealed", Text, nullable=False),
    Column("linked_at", UTCDateTime, nullable=False),
    Column("checked_at", UTCDateTime, nullable=False),  # when Kandev last accepted the token
    Column("broken_at", UTCDateTime),
    Index("ix_kandev_links_kandev_user", "kandev_user_id"),
)

parked_clicks = Table(
    "parked_clicks",
    metadata,
    Column("slack_user_id", String, primary_key=True),
    Column("pending_id", String, nullable=False),
    Column("payload", Text, nullable=False),  # JSON: what the click was
    Column("parked_at", UTCDateTime, nullable=False),
)
